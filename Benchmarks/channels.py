#!/usr/bin/env python3
"""Websocket channel benchmark: hold N subscribed channels against a running PushRelay, then measure local delivery
latency (Home Assistant POST sent -> event received on the device's channel) and the server's RSS.

Usage: channels.py --port PORT --pid SERVER_PID [--channels 10000] [--messages 2000] [--concurrency 16]
"""
import argparse, asyncio, json, os, random, statistics, time

import websockets


def rss_mb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


class Device:
    def __init__(self, index):
        self.token = f"bench-channel-device-{index:06d}-" + "x" * 24
        self.webhook = f"bench-hook-{index:06d}"
        self.waiters = {}
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
            waiter = self.waiters.pop(event["message"], None)
            if waiter is not None and not waiter.done():
                waiter.set_result(time.perf_counter())
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


async def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--pid", type=int, required=True)
    ap.add_argument("--channels", type=int, default=10000)
    ap.add_argument("--messages", type=int, default=2000)
    ap.add_argument("--concurrency", type=int, default=16)
    args = ap.parse_args()
    url = f"ws://127.0.0.1:{args.port}/api/websocket"

    rss_before = rss_mb(args.pid)
    devices = [Device(i) for i in range(args.channels)]
    started = time.perf_counter()
    for i in range(0, len(devices), 200):
        await asyncio.gather(*(d.connect(url) for d in devices[i:i + 200]))
    connect_s = time.perf_counter() - started
    await asyncio.sleep(1)
    rss_held = rss_mb(args.pid)

    latencies, failures = [], 0
    queue = asyncio.Queue()
    for n in range(args.messages):
        queue.put_nowait(n)

    async def worker():
        nonlocal failures
        reader, writer = await asyncio.open_connection("127.0.0.1", args.port)
        while not queue.empty():
            n = queue.get_nowait()
            d = random.choice(devices)
            text = f"bench message {n}"
            fut = asyncio.get_running_loop().create_future()
            d.waiters[text] = fut
            body = {"message": text, "push_token": d.token,
                    "registration_info": {"app_id": "io.homeassistant.companion.android", "webhook_id": d.webhook}}
            t0 = time.perf_counter()
            status, payload = await post(reader, writer, body)
            if status != 201 or not json.loads(payload)["messageId"].startswith("local:"):
                failures += 1
                continue
            try:
                t1 = await asyncio.wait_for(fut, 10)
                latencies.append((t1 - t0) * 1000)
            except asyncio.TimeoutError:
                failures += 1
        writer.close()

    t_start = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(args.concurrency)))
    elapsed = time.perf_counter() - t_start
    rss_after = rss_mb(args.pid)
    latencies.sort()
    p = lambda q: latencies[min(len(latencies) - 1, int(q * len(latencies)))] if latencies else float("nan")
    print(f"channels held: {args.channels} (connected in {connect_s:.1f} s)")
    print(f"server RSS: {rss_before:.0f} MB idle -> {rss_held:.0f} MB with channels -> {rss_after:.0f} MB after deliveries"
          f"   (target <= 300 MB)")
    print(f"local deliveries: {len(latencies)} ok, {failures} failed, {len(latencies) / elapsed:.0f}/s with {args.concurrency} posters")
    print(f"latency HA POST -> event received: p50 {p(0.50):.2f} ms, p99 {p(0.99):.2f} ms, max {latencies[-1] if latencies else float('nan'):.2f} ms"
          f"   (target p99 <= 5 ms)")
    for d in devices:
        await d.ws.close()


if __name__ == "__main__":
    asyncio.run(main())
