-- Channel bindings that arrive together, in one round trip: PostgresLocalPushStore gathers the binds made while
-- earlier ones run and calls pushrelay_bind_many once for them, in one transaction. It first takes every lock the
-- batch needs in one sorted order (the order pushrelay_bind uses), so batches and lone binds on any instance wait for
-- each other instead of deadlocking; then it binds the pairs one after another, in the batch's order, as separate
-- pushrelay_bind calls would (a later pair sees what an earlier one wrote). Returns the pairs each one replaced, by
-- its position in the arrays (1-based).
CREATE FUNCTION pushrelay_bind_many(p_tokens TEXT[], p_webhooks TEXT[], p_stamps TEXT[])
RETURNS TABLE (idx INT, former_token TEXT, former_webhook TEXT)
LANGUAGE plpgsql AS $bind$
DECLARE
    k TEXT;
    n INT;
BEGIN
    FOR k IN
        SELECT DISTINCT x FROM (
            SELECT 't:' || t AS x FROM unnest(p_tokens) AS t
            UNION ALL
            SELECT 'w:' || w FROM unnest(p_webhooks) AS w
        ) AS keys
        ORDER BY x
    LOOP
        PERFORM pg_advisory_xact_lock(hashtextextended(k, 0));
    END LOOP;
    FOR n IN 1 .. coalesce(array_length(p_tokens, 1), 0) LOOP
        RETURN QUERY SELECT n, b.former_token, b.former_webhook FROM pushrelay_bind(p_tokens[n], p_webhooks[n], p_stamps[n]) AS b;
    END LOOP;
END
$bind$;
