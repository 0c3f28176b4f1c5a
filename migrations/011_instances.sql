-- Several instances on one database (PostgreSQL; SQLite keeps the same schema version and tables, used by one
-- process): which instances are alive, which instance holds each device's websocket channel, and which instance
-- owns an unconfirmed channel message (its confirm timer).
CREATE TABLE instances (
    id           TEXT PRIMARY KEY,
    started_at   TEXT NOT NULL,
    heartbeat_at TEXT NOT NULL
);

CREATE TABLE local_push_presence (
    webhook_id      TEXT PRIMARY KEY,
    push_token      TEXT,
    instance_id     TEXT NOT NULL,
    support_confirm INTEGER NOT NULL,
    fallback        INTEGER NOT NULL,
    updated_at      TEXT NOT NULL
);

CREATE INDEX local_push_presence_by_token ON local_push_presence (push_token);

ALTER TABLE channel_messages ADD COLUMN owner_instance TEXT;
