#!/usr/bin/env python3
"""Push channel benchmark: hold N subscribed channels against a running PushRelay, then measure local delivery
latency (Home Assistant POST sent -> event received on the device's channel) and the server's RSS.

Usage: channels.py --port PORT --pid SERVER_PID [--channels 10000] [--messages 2000] [--concurrency 1,4,16] [--max-rate N]

The devices' sockets live in this process; the Home Assistant posters run in a second process (`--poster`), so a
busy event loop on one side does not delay the other's timestamps. Both sides stamp with time.perf_counter()
(CLOCK_MONOTONIC, shared by all processes on Linux) and the latencies are joined by message text at the end.
"""
import argparse, asyncio, gc, json, os, random, statistics, sys, time

import websockets


def rss_mb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def device_token(index):
    return f"bench-channel-device-{index:06d}-" + "x" * 24


def device_webhook(index):
    return f"bench-hook-{index:06d}"


class Device:
    received = {}  # message text -> perf_counter() when its event arrived

    def __init__(self, index):
        self.token = device_token(index)
        self.webhook = device_webhook(index)
        self.ws = None

    async def connect(self, url):
        self.ws = await websockets.connect(url, max_queue=64, ping_interval=None, open_timeout=60)
        assert json.loads(await self.ws.recv())["type"] == "auth_required"
        await self.ws.send(json.dumps({"type": "auth", "access_token": self.token}))
        assert json.loads(await self.ws.recv())["type"] == "auth_ok"
        await self.ws.send(json.dumps({"id": 1, "type": "mobile_app/push_notification_channel",
                                       "webhook_id": self.webhook, "support_confirm": True}))
        assert json.loads(await self.ws.recv())["success"] is True
        self.next_id = 2
        asyncio.get_running_loop().create_task(self.reader())

    async def reader(self):
        async for raw in self.ws:
            msg = json.loads(raw)
            if msg.get("type") != "event":
                continue
            event = msg["event"]
            Device.received[event["message"]] = time.perf_counter()
            self.next_id += 1
            await self.ws.send(json.dumps({"id": self.next_id, "type": "mobile_app/push_notification_confirm",
                                           "webhook_id": self.webhook, "confirm_id": event["hass_confirm_id"]}))


async def post(reader, writer, body):
    data = json.dumps(body).encode()
    writer.write(b"POST /api/sendPush/android/v1 HTTP/1.1\r\nHost: bench\r\nContent-Type: application/json\r\n"
                 + f"Content-Length: {len(data)}\r\n\r\n".encode() + data)
    await writer.drain()
    head = await reader.readuntil(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    payload = await reader.readexactly(length)
    status = int(head.split(b" ")[1])
    return status, payload


async def run_poster(args):
    """The Home Assistant side: POSTs notifications to random devices; prints {text: send time} as JSON."""
    sent, failures = {}, 0
    queue = asyncio.Queue()
    for n in range(args.channels if args.warm else args.messages):
        queue.put_nowait(n)

    # With --max-rate, each poster waits for its next slot, so the offered load is the same whatever the server's
    # speed: a faster server otherwise drives the device-side client harder, and its queueing shows up as latency.
    interval = int(args.concurrency) / args.max_rate if args.max_rate else 0

    async def worker():
        nonlocal failures
        reader, writer = await asyncio.open_connection("127.0.0.1", args.port)
        slot = time.perf_counter() + random.random() * interval
        while not queue.empty():
            if interval:
                delay = slot - time.perf_counter()
                if delay > 0:
                    await asyncio.sleep(delay)
                slot += interval
                if queue.empty():
                    break
            n = queue.get_nowait()
            # Warming posts once to every device, so that Home Assistant's first post binds each pair (it goes by the
            # cloud route while the channel is provisional); the measured posts then find bound channels.
            i = n if args.warm else random.randrange(args.channels)
            text = f"bench {'warm' if args.warm else 'message'} {n}"
            body = {"message": text, "push_token": device_token(i),
                    "registration_info": {"app_id": "io.homeassistant.companion.android", "webhook_id": device_webhook(i)}}
            t0 = time.perf_counter()
            status, payload = await post(reader, writer, body)
            if args.warm:
                failures += status != 201
                continue
            if status != 201 or not json.loads(payload)["messageId"].startswith("local:"):
                failures += 1
                continue
            sent[text] = t0
        writer.close()

    started = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(int(args.concurrency))))
    print(json.dumps({"sent": sent, "failures": failures, "elapsed": time.perf_counter() - started}))


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def measure_latency(args, concurrency):
    """Runs the poster process with `concurrency` connections and prints the latency of the events it caused."""
    Device.received.clear()
    cpu0 = cpu_seconds(args.pid)
    poster = await asyncio.create_subprocess_exec(
        sys.executable, os.path.abspath(__file__), "--poster", "--port", str(args.port), "--channels", str(args.channels),
        "--messages", str(args.messages), "--concurrency", str(concurrency), "--max-rate", str(args.max_rate),
        stdout=asyncio.subprocess.PIPE)
    out, _ = await poster.communicate()
    result = json.loads(out)
    await asyncio.sleep(0.5)  # events still in flight
    server_cpu = cpu_seconds(args.pid) - cpu0
    sent, failures, elapsed = result["sent"], result["failures"], result["elapsed"]
    latencies = []
    for text, t0 in sent.items():
        t1 = Device.received.get(text)
        if t1 is None:
            failures += 1
        else:
            latencies.append((t1 - t0) * 1000)
    latencies.sort()
    p = lambda q: latencies[min(len(latencies) - 1, int(q * len(latencies)))] if latencies else float("nan")
    rate = len(latencies) / elapsed
    print(f"{concurrency:3d} posters: {len(latencies)} delivered ({failures} failed), {rate:.0f}/s, "
          f"server CPU {1e6 * server_cpu / max(1, len(latencies)):.0f} us/delivery; "
          f"HA POST -> event p50 {p(0.50):.2f} ms, p99 {p(0.99):.2f} ms, max {latencies[-1] if latencies else float('nan'):.2f} ms"
          f"   (target p99 <= 5 ms)")


async def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--pid", type=int, default=0)
    ap.add_argument("--channels", type=int, default=10000)
    ap.add_argument("--messages", type=int, default=2000)
    ap.add_argument("--concurrency", default="1,4,16", help="poster connections; a comma-separated list measures each")
    ap.add_argument("--max-rate", type=float, default=0, help="cap on notifications per second over all posters (0: none)")
    ap.add_argument("--poster", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--warm", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    # A full garbage collection walks every object of 10,000 websockets and stalls this loop for hundreds of
    # milliseconds, which would be measured as delivery latency: the load generator runs without the cyclic GC.
    gc.disable()
    if args.poster:
        return await run_poster(args)
    url = f"ws://127.0.0.1:{args.port}/api/websocket"

    rss_before = rss_mb(args.pid)
    devices = [Device(i) for i in range(args.channels)]
    started = time.perf_counter()
    for i in range(0, len(devices), 200):
        await asyncio.gather(*(d.connect(url) for d in devices[i:i + 200]))
    connect_s = time.perf_counter() - started
    gc.collect()
    gc.freeze()
    await asyncio.sleep(1)
    rss_held = rss_mb(args.pid)

    print(f"channels held: {args.channels} (connected in {connect_s:.1f} s)")
    print(f"server RSS: {rss_before:.0f} MB idle -> {rss_held:.0f} MB with channels   (target <= 300 MB)")
    warm = await asyncio.create_subprocess_exec(
        sys.executable, os.path.abspath(__file__), "--poster", "--warm", "--port", str(args.port), "--channels",
        str(args.channels), "--concurrency", "16", stdout=asyncio.subprocess.PIPE)
    warmed = json.loads((await warm.communicate())[0])
    print(f"Home Assistant's first post to each device: {args.channels - warmed['failures']} answered 201 (pairs bound)")
    await asyncio.sleep(1)
    for level in [int(c) for c in str(args.concurrency).split(",")]:
        await measure_latency(args, level)
    print(f"server RSS after deliveries: {rss_mb(args.pid):.0f} MB")
    for d in devices:
        await d.ws.close()


if __name__ == "__main__":
    asyncio.run(main())
