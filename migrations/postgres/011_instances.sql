-- Several instances on one database: which instances are alive (a heartbeat, judged by PostgreSQL's own clock),
-- which instance holds each device's websocket channel (a Home Assistant POST reaching another instance is handed
-- to it with NOTIFY), and which instance owns an unconfirmed channel message's confirm timer (a live instance takes
-- over the messages of one that died).
CREATE TABLE instances (
    id           TEXT PRIMARY KEY,
    started_at   TIMESTAMPTZ NOT NULL DEFAULT now(),
    heartbeat_at TIMESTAMPTZ NOT NULL DEFAULT now()
);

CREATE TABLE local_push_presence (
    webhook_id      TEXT PRIMARY KEY,
    push_token      TEXT,
    instance_id     TEXT NOT NULL,
    support_confirm BOOLEAN NOT NULL,
    fallback        BOOLEAN NOT NULL,
    updated_at      TIMESTAMPTZ NOT NULL DEFAULT now()
);

CREATE INDEX local_push_presence_by_token ON local_push_presence (push_token);
CREATE INDEX local_push_presence_by_instance ON local_push_presence (instance_id);

ALTER TABLE channel_messages ADD COLUMN owner_instance TEXT;
CREATE INDEX channel_messages_by_owner ON channel_messages (owner_instance) WHERE state = 'unconfirmed';
