-- wrk script: POSTs Home Assistant notifications spread over many push tokens.
-- BENCH_PLATFORM=android (default): /api/sendPush/android/v1 with FCM-style tokens;
-- BENCH_PLATFORM=ios: /api/sendPushNotification as the companion app, with hex APNs tokens.
local tokens = tonumber(os.getenv("BENCH_TOKENS") or "20000")
local ios = os.getenv("BENCH_PLATFORM") == "ios"
local counter = 0
local thread_id = 0
local bad = 0

function setup(thread)
  thread:set("thread_id", thread_id)
  thread_id = thread_id + 1
end

function init(args)
  math.randomseed(os.time() + thread_id * 7919)
end

request = function()
  counter = counter + 1
  local n = math.random(tokens)
  local token, path, app, data
  if ios then
    token = string.format("%02x%062x", thread_id, n)
    path, app = "/api/sendPushNotification", "io.robbie.HomeAssistant"
    data = '{"subtitle":"Porch","tag":"door","group":"doors","push":{"badge":1}}'
  else
    token = string.format("bench-%d:%08d", thread_id, n)
    path, app = "/api/sendPush/android/v1", "io.homeassistant.companion.android"
    data = '{"ttl":0,"priority":"high","tag":"door","actions":[{"action":"OPEN","title":"Open"}]}'
  end
  local body = string.format(
    '{"message":"Door opened %d","title":"Front door","push_token":"%s",' ..
    '"registration_info":{"app_id":"%s","app_version":"2026.11","os_version":"15","webhook_id":"hook"},"data":%s}',
    counter, token, app, data)
  return wrk.format("POST", path, {["Content-Type"] = "application/json"}, body)
end

-- Count non-201 answers so a broken run is visible.
response = function(status, headers, body)
  if status ~= 201 then bad = bad + 1 end
end

done = function(summary, latency, requests)
  io.write(string.format("non-201 responses (last thread): %d\n", bad))
end
