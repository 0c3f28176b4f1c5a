-- wrk script: Matrix notify requests with one device each and a fresh event id per request.
-- By default the device is an FCM pusher with a fresh pushkey per request. With BENCH_SUBSCRIPTIONS_FILE set (lines of
-- endpoint, p256dh, auth, from `pushrelay-dev fake-providers --webpush-subscriptions N`) it is a web client's WebPush
-- pusher: the pushkey is the subscription's p256dh, data carries endpoint and auth.
-- BENCH_DEVICES=N (default 1): N devices per notify, each its own pushkey (or subscription).
-- Every event id names its run (BENCH_RUN, or else the second the run started), so that no run repeats another's
-- (event id, pushkey) pairs, a warm-up's included: a repeat within the de-duplication window is skipped without a
-- push, which would flatter the figures.
local counter = 0
local run = os.getenv("BENCH_RUN") or tostring(os.time())
local devices = tonumber(os.getenv("BENCH_DEVICES") or "1")
-- Each thread gets its own id as the global `thread_id` (set by setup in that thread's state; a chunk-level local
-- of the same name would hide it, and every thread would then send the same requests).
local next_thread = 0
local subscriptions = {}

function setup(thread)
  thread:set("thread_id", next_thread)
  next_thread = next_thread + 1
end

function init(args)
  local file = os.getenv("BENCH_SUBSCRIPTIONS_FILE")
  if file == nil or file == "" then return end
  for line in io.lines(file) do
    local endpoint, p256dh, auth = line:match("^(%S+) (%S+) (%S+)$")
    if endpoint then subscriptions[#subscriptions + 1] = { endpoint, p256dh, auth } end
  end
end

local function device(k)
  if #subscriptions == 0 then
    return string.format('{"app_id":"im.bench.android","pushkey":"bench-%d-%d-%d","pushkey_ts":1700000000}',
      thread_id, counter % 5000, k)
  end
  local s = subscriptions[(counter * 7919 + thread_id + k * 131) % #subscriptions + 1]
  return string.format(
    '{"app_id":"im.bench.web","pushkey":"%s","pushkey_ts":1700000000,"data":{"endpoint":"%s","auth":"%s"}}',
    s[2], s[1], s[3])
end

local function device_list()
  local list = {}
  for k = 1, devices do list[k] = device(k) end
  return table.concat(list, ",")
end

request = function()
  counter = counter + 1
  local body = string.format(
    '{"notification":{"event_id":"$bench-%s-%d-%d","room_id":"!room:example.org","type":"m.room.message",' ..
    '"sender":"@alice:example.org","sender_display_name":"Alice","room_name":"Bench",' ..
    '"content":{"msgtype":"m.text","body":"Message %d"},"counts":{"unread":%d},"prio":"high",' ..
    '"devices":[%s]}}',
    run, thread_id, counter, counter, counter % 50, device_list())
  return wrk.format("POST", "/_matrix/push/v1/notify", {["Content-Type"] = "application/json"}, body)
end

local bad = 0
response = function(status, headers, body)
  if status ~= 200 or body ~= '{"rejected":[]}' then bad = bad + 1 end
end

done = function(summary, latency, requests)
  io.write(string.format("unexpected responses (last thread): %d\n", bad))
end
