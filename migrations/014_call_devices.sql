-- The devices registered for call invites are `call_devices`, named for what they are used for (they were
-- `voip_devices`). The `dead_at` column goes: nothing ever set it (a dead push token is remembered by the delivery
-- log's dead-token marks, as for every other push).
ALTER TABLE voip_devices RENAME TO call_devices;
DROP INDEX voip_devices_by_key;
DROP INDEX voip_devices_by_push_token;
CREATE INDEX call_devices_by_key ON call_devices (api_key_id);
CREATE INDEX call_devices_by_push_token ON call_devices (push_token);
ALTER TABLE call_devices DROP COLUMN dead_at;
