-- wrk script: Matrix notify requests with one WebPush device each (a web client's pusher: the pushkey is the
-- subscription's p256dh, data carries endpoint and auth), a fresh event id per request. The subscriptions come from
-- `pushrelay-dev fake-providers --webpush-subscriptions N` (BENCH_SUBSCRIPTIONS_FILE: endpoint, p256dh, auth a line).
local counter = 0
-- Each thread gets its own id as the global `thread_id` (set by setup in that thread's state; a chunk-level local
-- of the same name would hide it, and every thread would then send the same requests).
local next_thread = 0
local subscriptions = {}

function setup(thread)
  thread:set("thread_id", next_thread)
  next_thread = next_thread + 1
end

function init(args)
  for line in io.lines(os.getenv("BENCH_SUBSCRIPTIONS_FILE")) do
    local endpoint, p256dh, auth = line:match("^(%S+) (%S+) (%S+)$")
    if endpoint then subscriptions[#subscriptions + 1] = { endpoint, p256dh, auth } end
  end
end

request = function()
  counter = counter + 1
  local s = subscriptions[(counter * 7919 + thread_id) % #subscriptions + 1]
  local body = string.format(
    '{"notification":{"event_id":"$bench-%d-%d","room_id":"!room:example.org","type":"m.room.message",' ..
    '"sender":"@alice:example.org","sender_display_name":"Alice","room_name":"Bench",' ..
    '"content":{"msgtype":"m.text","body":"Message %d"},"counts":{"unread":%d},"prio":"high",' ..
    '"devices":[{"app_id":"im.bench.web","pushkey":"%s","pushkey_ts":1700000000,' ..
    '"data":{"endpoint":"%s","auth":"%s"}}]}}',
    thread_id, counter, counter, counter % 50, s[2], s[1], s[3])
  return wrk.format("POST", "/_matrix/push/v1/notify", {["Content-Type"] = "application/json"}, body)
end

local bad = 0
response = function(status, headers, body)
  if status ~= 200 or body ~= '{"rejected":[]}' then bad = bad + 1 end
end

done = function(summary, latency, requests)
  io.write(string.format("unexpected responses (last thread): %d\n", bad))
end
