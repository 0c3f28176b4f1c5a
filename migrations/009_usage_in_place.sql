-- Every reservation updates its daily_usage row in place, in the same transaction as its decision. The write-behind of
-- 007 (deliveries counted by a pending delivery-log row, folded later) is gone: fold what an older build left pending,
-- then drop its view and table. usage_with_limits reads daily_usage directly.
UPDATE daily_usage SET attempts = daily_usage.attempts + c.pending, successful = daily_usage.successful + c.pending,
    folded_log_id = c.pending_last_id, updated_at = c.updated_at
FROM daily_usage_current c
WHERE c.pending > 0 AND daily_usage.day = c.day AND daily_usage.push_token = c.push_token;

DROP VIEW usage_with_limits;
CREATE VIEW usage_with_limits AS
    SELECT u.day, u.push_token, u.app_id, u.attempts, u.successful, u.errors, u.successful + u.errors AS total,
           u.notice_sent, l.daily_limit AS limit_override, u.updated_at
    FROM daily_usage u LEFT JOIN token_limits l ON l.push_token = u.push_token;
DROP VIEW daily_usage_current;
DROP TABLE usage_fold;
