-- wrk script: POSTs Home Assistant notifications to the Android endpoint, spreading them over many push tokens.
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
  local token = string.format("bench-%d:%08d", thread_id, math.random(tokens))
  local body = string.format(
    '{"message":"Door opened %d","title":"Front door","push_token":"%s",' ..
    '"registration_info":{"app_id":"io.homeassistant.companion.android","app_version":"2026.11","os_version":"15","webhook_id":"hook"},' ..
    '"data":{"ttl":0,"priority":"high","tag":"door","actions":[{"action":"OPEN","title":"Open"}]}}',
    counter, token)
  return wrk.format("POST", "/api/sendPush/android/v1", {["Content-Type"] = "application/json"}, body)
end

-- Count non-2xx answers so a broken run is visible.
local bad = 0
response = function(status, headers, body)
  if status ~= 201 then bad = bad + 1 end
end

done = function(summary, latency, requests)
  io.write(string.format("non-201 responses (last thread): %d\n", bad))
end
