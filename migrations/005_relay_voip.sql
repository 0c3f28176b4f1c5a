-- VoIP call-invite pushes: API keys for /api/v1/*, and the devices they register with a per-device AES-256 key.

-- `pushrelay api-key create`: a bearer credential for /api/v1/devices and /api/v1/calls, stored as a SHA-256 hash.
CREATE TABLE api_keys (
    id          INTEGER PRIMARY KEY,
    key_hash    TEXT NOT NULL UNIQUE,   -- hex SHA-256 of the key
    label       TEXT,
    created_at  TEXT NOT NULL,
    revoked_at  TEXT
);

-- Devices registered with POST /api/v1/devices. The encryption key must be kept to encrypt invites: protect the
-- database file like the provider credentials.
CREATE TABLE voip_devices (
    id              TEXT PRIMARY KEY,   -- UUID, the device_id
    api_key_id      INTEGER NOT NULL REFERENCES api_keys(id),
    platform        TEXT NOT NULL,      -- ios | android
    app_id          TEXT NOT NULL,
    push_token      TEXT NOT NULL,
    voip_token      TEXT,               -- iOS PushKit token
    label           TEXT,
    webhook_id      TEXT,               -- optional: its Home Assistant websocket channel (calls ring there first)
    encryption_key  TEXT NOT NULL,      -- base64 of 32 random bytes (AES-256-GCM)
    created_at      TEXT NOT NULL,
    key_rotated_at  TEXT,
    dead_at         TEXT,               -- the provider reported the token invalid
    dead_reason     TEXT
) WITHOUT ROWID;

CREATE INDEX voip_devices_by_key ON voip_devices (api_key_id);
CREATE INDEX voip_devices_by_push_token ON voip_devices (push_token);  -- encrypt_payloads: key by push token
