-- Matrix push gateway: the durable retry queue for devices whose delivery failed transiently after the homeserver
-- was already answered 200, and the (event_id, pushkey) de-duplication window. Times are unix milliseconds.

-- One row per device still to deliver. `notification` is the Matrix notification JSON narrowed to that device, so a
-- retry translates it again with the config current at that time.
CREATE TABLE matrix_retry_queue (
    id              INTEGER PRIMARY KEY,
    app_id          TEXT    NOT NULL,
    pushkey         TEXT    NOT NULL,
    event_id        TEXT,
    notification    TEXT    NOT NULL,
    attempts        INTEGER NOT NULL DEFAULT 1,   -- delivery attempts so far, the one in the request included
    next_attempt_at INTEGER NOT NULL,
    created_at      INTEGER NOT NULL,
    last_error      TEXT
);

CREATE INDEX matrix_retry_queue_due ON matrix_retry_queue (next_attempt_at);

-- Events already delivered (or queued) per pushkey, so a homeserver's retry of the same notification is not pushed twice.
CREATE TABLE matrix_dedup (
    event_id TEXT    NOT NULL,
    pushkey  TEXT    NOT NULL,
    seen_at  INTEGER NOT NULL,
    PRIMARY KEY (event_id, pushkey)
) WITHOUT ROWID;

CREATE INDEX matrix_dedup_by_time ON matrix_dedup (seen_at);
