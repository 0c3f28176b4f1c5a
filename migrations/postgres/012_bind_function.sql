-- A device's channel binding in one round trip: PostgresLocalPushStore.bind calls pushrelay_bind, which does what its
-- transaction did statement by statement (a new token posting for the first time was eight round trips on the
-- request path). It locks both sides of the pair in a fixed order (transaction-scoped advisory locks: two binds that
-- share a token or a webhook id wait for each other, on any instance, even when no row exists yet), returns the pairs
-- it replaces, and writes the pair unless it was stored already.
CREATE FUNCTION pushrelay_bind(p_token TEXT, p_webhook TEXT, p_stamp TEXT)
RETURNS TABLE (former_token TEXT, former_webhook TEXT)
LANGUAGE plpgsql AS $bind$
DECLARE
    k TEXT;
BEGIN
    FOREACH k IN ARRAY (SELECT array_agg(x ORDER BY x) FROM unnest(ARRAY['t:' || p_token, 'w:' || p_webhook]) AS x) LOOP
        PERFORM pg_advisory_xact_lock(hashtextextended(k, 0));
    END LOOP;
    RETURN QUERY
        SELECT b.push_token, b.webhook_id FROM channel_bindings b
        WHERE (b.push_token = p_token OR b.webhook_id = p_webhook) AND NOT (b.push_token = p_token AND b.webhook_id = p_webhook);
    IF FOUND OR NOT EXISTS (SELECT 1 FROM channel_bindings b WHERE b.push_token = p_token AND b.webhook_id = p_webhook) THEN
        DELETE FROM channel_bindings b WHERE b.push_token = p_token OR b.webhook_id = p_webhook;
        INSERT INTO channel_bindings (push_token, webhook_id, bound_at) VALUES (p_token, p_webhook, p_stamp);
    END IF;
END
$bind$;
