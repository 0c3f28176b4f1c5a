-- wrk script: POSTs Home Assistant iOS notifications (companion app id, hex APNs tokens) to /api/sendPushNotification.
local tokens = tonumber(os.getenv("BENCH_TOKENS") or "20000")
local counter = 0
local thread_id = 0

function setup(thread)
  thread:set("thread_id", thread_id)
  thread_id = thread_id + 1
end

function init(args)
  math.randomseed(os.time() + thread_id * 7919)
end

request = function()
  counter = counter + 1
  local token = string.format("%02x%062x", thread_id, math.random(tokens))
  local body = string.format(
    '{"message":"Door opened %d","title":"Front door","push_token":"%s",' ..
    '"registration_info":{"app_id":"io.robbie.HomeAssistant","app_version":"2026.11","os_version":"26.1","webhook_id":"hook"},' ..
    '"data":{"subtitle":"Porch","tag":"door","group":"doors","push":{"badge":1}}}',
    counter, token)
  return wrk.format("POST", "/api/sendPushNotification", {["Content-Type"] = "application/json"}, body)
end

local bad = 0
response = function(status, headers, body)
  if status ~= 201 then bad = bad + 1 end
end

done = function(summary, latency, requests)
  io.write(string.format("non-201 responses (last thread): %d\n", bad))
end
