-- Websocket push channel: admin-created channel tokens, and messages waiting for a device (unconfirmed or queued),
-- kept in SQLite so a restart loses none. Local deliveries are counted per token and day, apart from the cloud quota.

ALTER TABLE daily_usage ADD COLUMN webhook_id TEXT;                           -- last webhook id seen with the token
ALTER TABLE daily_usage ADD COLUMN local_delivered INTEGER NOT NULL DEFAULT 0; -- delivered over a channel (not quota)
ALTER TABLE daily_usage ADD COLUMN local_fallbacks INTEGER NOT NULL DEFAULT 0; -- unconfirmed, sent to the cloud instead
ALTER TABLE daily_usage ADD COLUMN local_dropped INTEGER NOT NULL DEFAULT 0;   -- queued past channel.offline_ttl

-- `pushrelay channel-token create --webhook-id W`: a credential bound to one webhook id, stored as a SHA-256 hash.
CREATE TABLE channel_tokens (
    id          INTEGER PRIMARY KEY,
    webhook_id  TEXT NOT NULL,
    token_hash  TEXT NOT NULL UNIQUE,   -- hex SHA-256 of the token
    label       TEXT,
    created_at  TEXT NOT NULL,
    revoked_at  TEXT
);

-- Messages owed to a device: 'unconfirmed' (sent, waiting for its confirm) or 'queued' (waiting for a subscription).
CREATE TABLE channel_messages (
    id           TEXT PRIMARY KEY,      -- also the hass_confirm_id
    webhook_id   TEXT NOT NULL,
    push_token   TEXT NOT NULL,
    platform     TEXT NOT NULL,         -- android | ios: the cloud route's translation
    notification TEXT NOT NULL,         -- the Home Assistant request body (JSON)
    state        TEXT NOT NULL,         -- unconfirmed | queued
    fallback     INTEGER NOT NULL,      -- 1: go to the cloud when unconfirmed; 0: stay queued for the device
    created_at   TEXT NOT NULL,
    expires_at   TEXT NOT NULL          -- created_at + channel.offline_ttl
) WITHOUT ROWID;

CREATE INDEX channel_messages_by_webhook ON channel_messages (webhook_id, created_at);
CREATE INDEX channel_messages_by_token ON channel_messages (push_token, created_at);
