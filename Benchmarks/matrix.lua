-- wrk script: Matrix notify requests with one FCM device each; a fresh event id and pushkey per request.
local counter = 0
-- Each thread gets its own id as the global `thread_id` (set by setup in that thread's state; a chunk-level local
-- of the same name would hide it, and every thread would then send the same requests).
local next_thread = 0

function setup(thread)
  thread:set("thread_id", next_thread)
  next_thread = next_thread + 1
end

request = function()
  counter = counter + 1
  local body = string.format(
    '{"notification":{"event_id":"$bench-%d-%d","room_id":"!room:example.org","type":"m.room.message",' ..
    '"sender":"@alice:example.org","sender_display_name":"Alice","room_name":"Bench",' ..
    '"content":{"msgtype":"m.text","body":"Message %d"},"counts":{"unread":%d},"prio":"high",' ..
    '"devices":[{"app_id":"im.bench.android","pushkey":"bench-%d-%d","pushkey_ts":1700000000}]}}',
    thread_id, counter, counter, counter % 50, thread_id, counter % 5000)
  return wrk.format("POST", "/_matrix/push/v1/notify", {["Content-Type"] = "application/json"}, body)
end

local bad = 0
response = function(status, headers, body)
  if status ~= 200 or body ~= '{"rejected":[]}' then bad = bad + 1 end
end

done = function(summary, latency, requests)
  io.write(string.format("unexpected responses (last thread): %d\n", bad))
end
