-- wrk script: POSTs Home Assistant notifications spread over many push tokens.
-- BENCH_PLATFORM=android (default): /api/sendPush/android/v1 with FCM-style tokens (app id BENCH_APP, default the
-- Android companion app);
-- BENCH_PLATFORM=ios: /api/sendPushNotification as the companion app, with hex APNs tokens.
-- Each thread builds BENCH_POOL (default 4,096) requests (random tokens out of BENCH_TOKENS) before the run and sends
-- them in turn, so the load generator spends about as little CPU per request as it does on GET /health: on a 2-core
-- machine its CPU is the server's CPU. Each token has a webhook id of its own, as each device has in Home Assistant: PushRelay binds the
-- pair once (the push channel's credential check) and then only compares it.
-- BENCH_FORWARDED_FOR: an X-Forwarded-For value for every request, as a proxy would add it; with a %d in it and
-- BENCH_CLIENTS=N, the requests name N clients in turn (%d from 1 to N).
local tokens = tonumber(os.getenv("BENCH_TOKENS") or "20000")
local forwarded = os.getenv("BENCH_FORWARDED_FOR")
local clients = tonumber(os.getenv("BENCH_CLIENTS") or "1")
local ios = os.getenv("BENCH_PLATFORM") == "ios"
local pool_size = tonumber(os.getenv("BENCH_POOL") or "4096")
-- Each thread gets its own id as the global `thread_id` (set by setup in that thread's state; a chunk-level local
-- of the same name would hide it, and every thread would then send the same requests).
local next_thread = 0
local pool = {}
local next_request = 0

function setup(thread)
  thread:set("thread_id", next_thread)
  next_thread = next_thread + 1
end

function init(args)
  math.randomseed(os.time() + thread_id * 7919)
  for i = 1, pool_size do
    local n = math.random(tokens)
    local token, path, app, data
    if ios then
      token = string.format("%02x%062x", thread_id, n)
      path, app = "/api/sendPushNotification", "io.robbie.HomeAssistant"
      data = '{"subtitle":"Porch","tag":"door","group":"doors","push":{"badge":1}}'
    else
      token = string.format("bench-%d:%08d", thread_id, n)
      path, app = "/api/sendPush/android/v1", os.getenv("BENCH_APP") or "io.homeassistant.companion.android"
      data = '{"ttl":0,"priority":"high","tag":"door","actions":[{"action":"OPEN","title":"Open"}]}'
    end
    local body = string.format(
      '{"message":"Door opened %d","title":"Front door","push_token":"%s",' ..
      '"registration_info":{"app_id":"%s","app_version":"2026.11","os_version":"15","webhook_id":"hook-%d-%d"},"data":%s}',
      i, token, app, thread_id, n, data)
    local headers = {["Content-Type"] = "application/json"}
    if forwarded then headers["X-Forwarded-For"] = string.format(forwarded, i % clients + 1) end
    pool[i] = wrk.format("POST", path, headers, body)
  end
end

request = function()
  next_request = next_request % pool_size + 1
  return pool[next_request]
end

-- BENCH_DELAY_MS paces each connection (a pause before each request), so that N connections offer about
-- N * 1000 / BENCH_DELAY_MS requests a second whatever the answers: an open load, as Home Assistant instances make,
-- which does not resend at once when refused (Benchmarks/overload.sh).
local pause = tonumber(os.getenv("BENCH_DELAY_MS") or "0")
if pause > 0 then
  delay = function()
    return pause
  end
end
