#!/usr/bin/env python3
"""A connection to FCM that goes silent under steady load, as a NAT or load balancer that forgot the flow leaves it.

One process: a TCP proxy in front of the fake FCM (PushRelay's `fcm` provider points at it), and a steady load of Home
Assistant Android notifications (a distinct push token each) at --rate per second for --duration seconds. At
--silence-after seconds every proxied connection open at that moment stops carrying bytes either way and stays
open; connections opened later pass. Prints, per second of sending, how many notifications were sent, answered 201,
answered otherwise, and the slowest answer; then the figures the goal names.

Usage: silent-connection.py --server-port P --proxy-port Q --fcm-port F [--rate 100] [--duration 30] [--silence-after 8]
"""
import argparse
import asyncio
import json
import time


class Proxy:
    def __init__(self, target_port):
        self.target_port = target_port
        self.links = []  # [silent] flags of the open connections

    async def handle(self, client_reader, client_writer):
        link = [False]
        self.links.append(link)
        try:
            upstream_reader, upstream_writer = await asyncio.open_connection("127.0.0.1", self.target_port)
        except OSError:
            client_writer.close()
            return

        async def pipe(reader, writer):
            try:
                while True:
                    data = await reader.read(65536)
                    if not data:
                        break
                    if not link[0]:
                        writer.write(data)
                        await writer.drain()
            except (ConnectionError, OSError, asyncio.CancelledError):
                pass
            finally:
                if not link[0]:
                    writer.close()

        try:
            await asyncio.gather(pipe(client_reader, upstream_writer), pipe(upstream_reader, client_writer))
        except asyncio.CancelledError:
            pass  # the run is over

    def silence(self):
        for link in self.links:
            link[0] = True
        return len(self.links)


async def post(port, i):
    body = json.dumps({
        "message": "silent connection benchmark",
        "push_token": f"silent:{i}:" + "x" * 140,
        "registration_info": {"app_id": "io.homeassistant.companion.android", "app_version": "1", "webhook_id": f"w{i}"},
    }).encode()
    request = (
        f"POST /api/sendPush/android/v1 HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    ).encode() + body
    started = time.monotonic()
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(request)
        await writer.drain()
        status_line = await asyncio.wait_for(reader.readline(), timeout=30)
        writer.close()
        status = int(status_line.split()[1])
    except (OSError, asyncio.TimeoutError, IndexError, ValueError):
        status = 0
    return started, status, time.monotonic() - started


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--server-port", type=int, required=True)
    parser.add_argument("--proxy-port", type=int, required=True)
    parser.add_argument("--fcm-port", type=int, required=True)
    parser.add_argument("--rate", type=int, default=100)
    parser.add_argument("--duration", type=float, default=30)
    parser.add_argument("--silence-after", type=float, default=8)
    args = parser.parse_args()

    proxy = Proxy(args.fcm_port)
    server = await asyncio.start_server(proxy.handle, "127.0.0.1", args.proxy_port)
    start = time.monotonic()
    silenced_at = None
    tasks = []
    i = 0
    while time.monotonic() - start < args.duration:
        now = time.monotonic() - start
        if silenced_at is None and now >= args.silence_after:
            silenced = proxy.silence()
            silenced_at = now
            print(f"t={now:5.2f}s: {silenced} proxied connection(s) went silent")
        tasks.append(asyncio.create_task(post(args.server_port, i)))
        i += 1
        await asyncio.sleep(max(0.0, start + i / args.rate - time.monotonic()))
    results = await asyncio.gather(*tasks)
    server.close()

    by_second = {}
    for started, status, took in results:
        s = int(started - start)
        sent, ok, other, slowest = by_second.get(s, (0, 0, 0, 0.0))
        by_second[s] = (sent + 1, ok + (status == 201), other + (status != 201), max(slowest, took))
    print("second  sent  201  other  slowest answer")
    for s in sorted(by_second):
        sent, ok, other, slowest = by_second[s]
        print(f"{s:6d} {sent:5d} {ok:4d} {other:6d}  {slowest * 1000:8.0f} ms")
    late = [r for r in results if silenced_at is not None and r[0] - start >= silenced_at + 5]
    print(f"sent {len(results)}; answered 201: {sum(1 for r in results if r[1] == 201)}; "
          f"slowest answer of all: {max(r[2] for r in results) * 1000:.0f} ms (Home Assistant waits 10 s)")
    if late:
        print(f"sent 5 s or more after the silence: {len(late)}; answered 201: {sum(1 for r in late if r[1] == 201)}; "
              f"slowest: {max(r[2] for r in late) * 1000:.0f} ms (goal: all 201, each under 2 s)")


asyncio.run(main())
