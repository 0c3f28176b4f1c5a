-- The devices registered for call invites are `call_devices`, named for what they are used for (they were
-- `voip_devices`). The `dead_at` column goes: nothing ever set it (a dead push token is remembered by the delivery
-- log's dead-token marks, as for every other push).
ALTER TABLE voip_devices RENAME TO call_devices;
ALTER INDEX voip_devices_by_key RENAME TO call_devices_by_key;
ALTER INDEX voip_devices_by_push_token RENAME TO call_devices_by_push_token;
ALTER TABLE call_devices DROP COLUMN dead_at;
