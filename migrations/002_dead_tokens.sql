-- Push tokens a provider reported as dead (FCM UNREGISTERED, APNs 410/BadDeviceToken…). Requests for them are
-- answered 410 at once, without calling the provider, until expires_at (delivery.dead_token_ttl).
CREATE TABLE dead_tokens (
    push_token TEXT    PRIMARY KEY,
    provider   TEXT    NOT NULL,
    reason     TEXT    NOT NULL,   -- the provider's reason, e.g. UNREGISTERED, Unregistered, BadDeviceToken
    message    TEXT,
    marked_at  TEXT    NOT NULL,
    expires_at TEXT    NOT NULL
) WITHOUT ROWID;

CREATE INDEX dead_tokens_by_expiry ON dead_tokens (expires_at);
