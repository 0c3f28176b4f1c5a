-- Which webhook id each push token belongs to, as Home Assistant's accepted notifications last showed it. A push
-- token may open a websocket push channel only for its own webhook id, and a webhook id only for its own push token
-- (ChannelBindings). Both columns are unique: a token refresh (same webhook id, new token) or a re-registration (same
-- token, new webhook id) replaces the old pair.
CREATE TABLE channel_bindings (
    push_token  TEXT NOT NULL PRIMARY KEY,
    webhook_id  TEXT NOT NULL UNIQUE,
    bound_at    TEXT NOT NULL
) WITHOUT ROWID;

-- Seeded from the usage ledger, oldest first, so that the latest pair of each token and of each webhook id wins.
INSERT OR REPLACE INTO channel_bindings (push_token, webhook_id, bound_at)
    SELECT push_token, webhook_id, updated_at FROM daily_usage
    WHERE webhook_id IS NOT NULL AND webhook_id <> ''
    ORDER BY updated_at, day;
