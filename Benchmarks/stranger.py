#!/usr/bin/env python3
"""What one connection with no credentials can make a running PushRelay hold (issue 53's patterns).

Standard library only: raw sockets and a minimal websocket client. Every loop is bounded in count and time, and every
byte goes to 127.0.0.1. Two commands:

  stranger.py run --pattern N --port P --pid PID --db FILE --seconds S [--store-seconds S2]
                  [--auth-timeout-ms A] [--request-timeout-ms R] [--max-queued-bytes B] [--out FILE]
      runs one pattern against the server on port P (process PID, SQLite database FILE), prints its result as one
      JSON line (and writes it to FILE), and exits 0 when it passed, 1 when it failed.
  stranger.py table FILE...
      prints the results as a table and exits 1 when any failed.

The patterns (1-4 flood for --seconds and never read; 5-7 are bounded in count and capped at --store-seconds):
  1 ws-ping-flood    websocket upgrade, never authenticates, 125-byte masked pings as fast as possible, never reads
  2 ws-stalled-pong  the same for a third of the auth timeout, then one empty pong every third of the auth timeout
  3 ha-pipelined     pipelined POST /api/sendPush/android/v1 with body {}, never reads
  4 matrix-pipelined pipelined POST /_matrix/push/v1/notify with a small valid body (a fresh event id each), never reads
  5 oversize-fields  200 posts, each with one 250,000-byte made-up field: a Home Assistant push token, a webhook id,
                     or a Matrix pushkey in turn (answers read)
  6 binding-cycles   up to 500 cycles: a websocket authenticates with a made-up 30,000-byte push token and subscribes
                     with a made-up 30,000-byte webhook id, then that pair is posted to the open Home Assistant route
  7 no-fallback      a websocket subscribes with support_confirm: true, fallback: false and stops reading; 400 posts of
                     240,000-byte messages for its pair

The goal each pattern is judged by (PASS/FAIL):
  every pattern      RSS peak - RSS before <= 64 MB
  1-4                the server closed the connection within the run (a timeout; the client never authenticates or
                     never reads)
  5                  the stored bytes of daily_usage + channel_bindings grew by at most 64 KiB (no 250 KB field kept)
  6                  the stored bytes of channel_bindings grew by at most 1 MiB
  7                  the stored bytes of channel_messages never exceeded --max-queued-bytes
"""
import argparse
import base64
import json
import os
import select
import shutil
import socket
import sqlite3
import subprocess
import sys
import threading
import time

HOST = "127.0.0.1"
RSS_GOAL_MB = 64
PATTERNS = {
    1: "ws-ping-flood",
    2: "ws-stalled-pong",
    3: "ha-pipelined",
    4: "matrix-pipelined",
    5: "oversize-fields",
    6: "binding-cycles",
    7: "no-fallback",
}
HA_APP = "io.homeassistant.companion.android"
MATRIX_APP = "im.stranger.android"  # stranger.sh's config routes it to the sandbox provider
RSS_CAP_MB = int(os.environ.get("STRANGER_RSS_CAP_MB", "3000"))  # the attack stops here, to spare the machine


# MARK: the server's process, sockets and database


def rss_kb(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def server_side_state(server_port, client_port):
    """The server's end of one loopback connection, from /proc/net/tcp: "open" while a process holds it (an inode),
    "closed" once no process does (gone, or orphaned while the kernel finishes it), None if never found."""
    for name in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(name) as f:
                next(f)
                for line in f:
                    parts = line.split()
                    local, remote, inode = parts[1], parts[2], parts[9]
                    if int(local.rsplit(":", 1)[1], 16) == server_port and int(remote.rsplit(":", 1)[1], 16) == client_port:
                        return "open" if inode != "0" else "closed"
        except OSError:
            continue
    return "closed"


def db_stats(path):
    """{table: [rows, bytes]} of every table in the SQLite file, read-only; bytes is the sum of every stored value's
    length as a blob (text in UTF-8, numbers as their text)."""
    if not path or not os.path.exists(path):
        return {}
    columns = {}
    if shutil.which("sqlite3"):
        def query(sql):
            out = subprocess.run(["sqlite3", "-readonly", "-batch", "-separator", "\t", path, sql], check=True,
                                 capture_output=True, text=True, timeout=60).stdout
            return [line.split("\t") for line in out.splitlines() if line]
    else:
        connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=30)

        def query(sql):
            return [[str(v) for v in row] for row in connection.execute(sql).fetchall()]
    try:
        for table, column in query("SELECT m.name, p.name FROM sqlite_master m, pragma_table_info(m.name) p "
                                   "WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite_%' ORDER BY m.name, p.cid"):
            columns.setdefault(table, []).append(column)
        stats = {}
        for table, cols in columns.items():
            total = " + ".join(f'coalesce(length(CAST("{c}" AS BLOB)), 0)' for c in cols)
            row = query(f'SELECT count(*), coalesce(sum({total}), 0) FROM "{table}"')[0]
            stats[table] = [int(row[0]), int(row[1])]
        return stats
    except (subprocess.SubprocessError, sqlite3.Error, IndexError, ValueError) as error:
        return {"error": str(error)}


class Watch(threading.Thread):
    """Samples the server's RSS every 50 ms (peak) and, for the connections named in `clients`, whether the server
    still holds them (every 100 ms)."""

    def __init__(self, pid, port):
        super().__init__(daemon=True)
        self.pid, self.port = pid, port
        self.started_at = time.monotonic()
        self.before_kb = rss_kb(pid)
        self.peak_kb = self.before_kb
        self.clients = {}  # client port -> [seen open, closed at (s from start) or None]
        self.running = True

    def watch(self, client_port):
        self.clients[client_port] = [False, None]

    def closed_at(self, client_port):
        return self.clients.get(client_port, [False, None])[1]

    def run(self):
        tick = 0
        while self.running:
            self.peak_kb = max(self.peak_kb, rss_kb(self.pid))
            if tick % 2 == 0:
                for client_port, state in list(self.clients.items()):
                    if state[1] is not None:
                        continue
                    side = server_side_state(self.port, client_port)
                    if side == "open":
                        state[0] = True
                    elif state[0]:
                        state[1] = time.monotonic() - self.started_at
            tick += 1
            time.sleep(0.05)

    def elapsed(self):
        return time.monotonic() - self.started_at

    def over_cap(self):
        return self.peak_kb > RSS_CAP_MB * 1024


# MARK: a minimal websocket client (RFC 6455: masked client frames)


def ws_frame(opcode, payload=b""):
    mask = os.urandom(4)
    n = len(payload)
    if n < 126:
        head = bytes([0x80 | opcode, 0x80 | n])
    elif n < 65536:
        head = bytes([0x80 | opcode, 0x80 | 126]) + n.to_bytes(2, "big")
    else:
        head = bytes([0x80 | opcode, 0x80 | 127]) + n.to_bytes(8, "big")
    if n:
        key = (mask * (n // 4 + 1))[:n]
        payload = (int.from_bytes(payload, "big") ^ int.from_bytes(key, "big")).to_bytes(n, "big")
    return head + mask + payload


def connect(port, rcvbuf=None):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if rcvbuf:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    s.settimeout(10)
    s.connect((HOST, port))
    return s


def read_http_head(s):
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = s.recv(4096)
        if not chunk:
            raise ConnectionError("closed before the answer's head")
        data += chunk
        if len(data) > 65536:
            raise ConnectionError("answer head too long")
    head, rest = data.split(b"\r\n\r\n", 1)
    return head.decode("latin-1"), rest


class WebSocket:
    def __init__(self, port, rcvbuf=None):
        self.sock = connect(port, rcvbuf)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall((f"GET /api/websocket HTTP/1.1\r\nHost: {HOST}:{port}\r\nUpgrade: websocket\r\n"
                           f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
        head, self.buffer = read_http_head(self.sock)
        if " 101 " not in head.split("\r\n", 1)[0] + " ":
            raise ConnectionError(f"upgrade refused: {head.splitlines()[0]}")

    def _need(self, n):
        while len(self.buffer) < n:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("websocket closed")
            self.buffer += chunk

    def read_text(self):
        """The next text frame (pings and pongs skipped); None at a close frame."""
        while True:
            self._need(2)
            opcode, n = self.buffer[0] & 0x0F, self.buffer[1] & 0x7F
            offset = 2
            if n == 126:
                self._need(4)
                n, offset = int.from_bytes(self.buffer[2:4], "big"), 4
            elif n == 127:
                self._need(10)
                n, offset = int.from_bytes(self.buffer[2:10], "big"), 10
            self._need(offset + n)
            payload, self.buffer = self.buffer[offset:offset + n], self.buffer[offset + n:]
            if opcode == 8:
                return None
            if opcode == 1:
                return json.loads(payload)

    def send_json(self, value):
        self.sock.sendall(ws_frame(1, json.dumps(value).encode()))

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


# MARK: one HTTP/1.1 keep-alive connection that reads its answers


class HTTPConnection:
    def __init__(self, port):
        self.port = port
        self.sock = None
        self.reconnects = -1

    def post(self, path, body):
        for _ in range(2):
            if self.sock is None:
                self.sock = connect(self.port)
                self.sock.settimeout(60)
                self.reconnects += 1
            request = (f"POST {path} HTTP/1.1\r\nHost: {HOST}\r\nContent-Type: application/json\r\n"
                       f"Content-Length: {len(body)}\r\n\r\n").encode() + body
            try:
                self.sock.sendall(request)
                head, rest = read_http_head(self.sock)
            except (OSError, ConnectionError):
                self.close()
                continue
            lines = head.split("\r\n")
            status = int(lines[0].split()[1])
            headers = {k.strip().lower(): v.strip() for k, v in (l.split(":", 1) for l in lines[1:] if ":" in l)}
            length = int(headers.get("content-length", "0"))
            while len(rest) < length:
                chunk = self.sock.recv(65536)
                if not chunk:
                    break
                rest += chunk
            if headers.get("connection", "").lower() == "close":
                self.close()
            return status
        return 0  # no answer on two connections

    def close(self):
        if self.sock is not None:
            try:
                self.sock.close()
            except OSError:
                pass
            self.sock = None


def ha_body(token, webhook_id, message="stranger"):
    return json.dumps({"message": message, "push_token": token,
                       "registration_info": {"app_id": HA_APP, "app_version": "1", "os_version": "14",
                                             "webhook_id": webhook_id}}).encode()


def matrix_body(event_id, pushkey):
    return json.dumps({"notification": {"event_id": event_id, "room_id": "!room:stranger.example", "type": "m.room.message",
                                        "sender": "@s:stranger.example", "counts": {"unread": 1},
                                        "devices": [{"app_id": MATRIX_APP, "pushkey": pushkey, "pushkey_ts": 1}]}}).encode()


# MARK: the patterns


def flood(args, watch, sock, chunks, stop_reading_at=None):
    """Writes what `chunks()` gives (None: nothing now) on the non-blocking socket until the run's time is over, the
    server has closed the connection, or RSS passes the cap. Returns what happened."""
    sock.setblocking(False)
    client_port = sock.getsockname()[1]
    watch.watch(client_port)
    pending = b""
    sent = 0
    ended = "time"
    deadline = watch.started_at + args.seconds
    while time.monotonic() < deadline:
        if watch.closed_at(client_port) is not None:
            ended = "closed"
            break
        if watch.over_cap():
            ended = "rss cap"
            break
        if not pending:
            pending = chunks() or b""
        events = select.poll()
        events.register(sock, (select.POLLOUT if pending else 0) | select.POLLERR | select.POLLHUP)
        ready = events.poll(50)
        if any(e & (select.POLLERR | select.POLLHUP) for _, e in ready):
            ended = "closed"
            break
        if pending and any(e & select.POLLOUT for _, e in ready):
            try:
                n = sock.send(pending)
                sent += n
                pending = pending[n:]
            except BlockingIOError:
                pass
            except OSError:
                ended = "closed"
                break
    if ended == "closed":
        # The client saw the close (a reset); the watcher confirms the server gave the socket up.
        for _ in range(20):
            if watch.closed_at(client_port) is not None:
                break
            time.sleep(0.05)
        if watch.closed_at(client_port) is None:
            watch.clients[client_port][1] = watch.elapsed()
    return {"ended": ended, "bytes_sent": sent, "client_port": client_port}


def pattern_ws_flood(args, watch, pong_every=None):
    ws = WebSocket(args.port, rcvbuf=4096)  # reads the 101 head only; never authenticates, never reads again
    ping = ws_frame(9, b"p" * 125)
    burst = ping * 512
    flood_until = watch.started_at + (pong_every if pong_every else args.seconds + 1)
    next_pong = [flood_until]

    def chunks():
        now = time.monotonic()
        if now < flood_until:
            return burst
        if pong_every and now >= next_pong[0]:
            next_pong[0] = now + pong_every
            return ws_frame(10)
        return None

    result = flood(args, watch, ws.sock, chunks)
    ws.close()
    return result


def pattern_pipelined(args, watch, matrix):
    sock = connect(args.port, rcvbuf=4096)
    counter = [0]
    ha = (f"POST /api/sendPush/android/v1 HTTP/1.1\r\nHost: {HOST}\r\nContent-Type: application/json\r\n"
          f"Content-Length: 2\r\n\r\n{{}}").encode() * 64

    def chunks():
        if not matrix:
            return ha
        parts = []
        for _ in range(64):
            counter[0] += 1
            body = matrix_body(f"$stranger-{counter[0]}", "stranger-pushkey-0123456789abcdef")
            parts.append((f"POST /_matrix/push/v1/notify HTTP/1.1\r\nHost: {HOST}\r\nContent-Type: application/json\r\n"
                          f"Content-Length: {len(body)}\r\n\r\n").encode() + body)
        return b"".join(parts)

    result = flood(args, watch, sock, chunks)
    sock.close()
    return result


def store_deadline(args, watch):
    return watch.started_at + args.store_seconds


def pattern_oversize(args, watch):
    http = HTTPConnection(args.port)
    statuses = {}
    deadline = store_deadline(args, watch)
    posts = 0
    for i in range(200):
        if time.monotonic() > deadline or watch.over_cap():
            break
        long = f"{i:04d}-" + "x" * (250_000 - 5)
        if i % 3 == 0:
            status = http.post("/api/sendPush/android/v1", ha_body(long, f"stranger-hook-{i}"))
        elif i % 3 == 1:
            status = http.post("/api/sendPush/android/v1", ha_body(f"stranger-token-{i}-0123456789abcdef", long))
        else:
            status = http.post("/_matrix/push/v1/notify", matrix_body(f"$oversize-{i}", long))
        statuses[status] = statuses.get(status, 0) + 1
        posts += 1
    http.close()
    return {"posts": posts, "answers": statuses, "reconnects": max(http.reconnects, 0)}


def pattern_binding_cycles(args, watch):
    http = HTTPConnection(args.port)
    statuses, subscribe = {}, {}
    deadline = store_deadline(args, watch)
    cycles = 0
    for i in range(500):
        if time.monotonic() > deadline or watch.over_cap():
            break
        token = f"stranger-{i:04d}-" + "t" * (30_000 - 14)
        webhook = f"hook-{i:04d}-" + "w" * (30_000 - 10)
        outcome = "error"
        ws = None
        try:
            ws = WebSocket(args.port)
            ws.read_text()  # auth_required
            ws.send_json({"type": "auth", "access_token": token})
            answer = ws.read_text()
            outcome = (answer or {}).get("type", "closed")
            if outcome == "auth_ok":
                ws.send_json({"id": 1, "type": "mobile_app/push_notification_channel", "webhook_id": webhook,
                              "support_confirm": True})
                result = ws.read_text() or {}
                outcome = "subscribed" if result.get("success") else (result.get("error") or {}).get("code", "closed")
        except (OSError, ConnectionError, ValueError):
            pass
        subscribe[outcome] = subscribe.get(outcome, 0) + 1
        status = http.post("/api/sendPush/android/v1", ha_body(token, webhook))
        statuses[status] = statuses.get(status, 0) + 1
        if ws:
            ws.close()
        cycles += 1
    http.close()
    return {"cycles": cycles, "subscribe": subscribe, "answers": statuses}


def pattern_no_fallback(args, watch):
    token = "stranger-no-fallback-token-0123456789abcdef"
    webhook = "stranger-no-fallback-hook"
    ws = WebSocket(args.port, rcvbuf=4096)
    ws.read_text()
    ws.send_json({"type": "auth", "access_token": token})
    auth = (ws.read_text() or {}).get("type")
    ws.send_json({"id": 1, "type": "mobile_app/push_notification_channel", "webhook_id": webhook,
                  "support_confirm": True, "fallback": False})
    subscribed = bool((ws.read_text() or {}).get("success"))
    client_port = ws.sock.getsockname()[1]
    watch.watch(client_port)
    # From here the channel never reads and never confirms.
    http = HTTPConnection(args.port)
    statuses = {}
    deadline = store_deadline(args, watch)
    peak_stored = 0
    posts = 0
    for i in range(400):
        if time.monotonic() > deadline or watch.over_cap():
            break
        message = f"{i:04d} " + "m" * (240_000 - 5)
        status = http.post("/api/sendPush/android/v1", ha_body(token, webhook, message))
        statuses[status] = statuses.get(status, 0) + 1
        posts += 1
        if i % 20 == 19:
            peak_stored = max(peak_stored, db_stats(args.db).get("channel_messages", [0, 0])[1])
    time.sleep(1)
    peak_stored = max(peak_stored, db_stats(args.db).get("channel_messages", [0, 0])[1])
    http.close()
    ws.close()
    return {"auth": auth, "subscribed": subscribed, "posts": posts, "answers": statuses,
            "peak_channel_messages_bytes": peak_stored, "client_port": client_port}


def run(args):
    db_before = db_stats(args.db)
    watch = Watch(args.pid, args.port)
    watch.start()
    time.sleep(0.2)
    watch.before_kb = rss_kb(args.pid)
    watch.peak_kb = watch.before_kb
    watch.started_at = time.monotonic()
    if args.pattern == 1:
        detail = pattern_ws_flood(args, watch)
    elif args.pattern == 2:
        detail = pattern_ws_flood(args, watch, pong_every=args.auth_timeout_ms / 3000)
    elif args.pattern in (3, 4):
        detail = pattern_pipelined(args, watch, matrix=args.pattern == 4)
    elif args.pattern == 5:
        detail = pattern_oversize(args, watch)
    elif args.pattern == 6:
        detail = pattern_binding_cycles(args, watch)
    else:
        detail = pattern_no_fallback(args, watch)
    ran = watch.elapsed()
    closed_at = watch.closed_at(detail.get("client_port", -1))
    time.sleep(args.settle)  # the connection is closed; the server settles (and its group commits land)
    watch.running = False
    watch.join()
    after_kb = rss_kb(args.pid)
    db_after = db_stats(args.db)

    growth_mb = (watch.peak_kb - watch.before_kb) / 1024
    failures = []
    if growth_mb > RSS_GOAL_MB:
        failures.append(f"RSS grew {growth_mb:.0f} MB (goal <= {RSS_GOAL_MB})")
    if after_kb == 0:
        failures.append("the server process is gone")

    def grew(*tables):
        return sum(db_after.get(t, [0, 0])[1] - db_before.get(t, [0, 0])[1] for t in tables)

    if args.pattern <= 4 and closed_at is None:
        failures.append(f"the server did not close the connection within {args.seconds:g} s")
    if args.pattern == 5 and grew("daily_usage", "channel_bindings") > 64 * 1024:
        failures.append(f"daily_usage + channel_bindings grew {grew('daily_usage', 'channel_bindings'):,} bytes (goal <= 64 KiB)")
    if args.pattern == 6 and grew("channel_bindings") > 1 << 20:
        failures.append(f"channel_bindings grew {grew('channel_bindings'):,} bytes (goal <= 1 MiB)")
    if args.pattern == 7 and detail["peak_channel_messages_bytes"] > args.max_queued_bytes:
        failures.append(f"channel_messages held {detail['peak_channel_messages_bytes']:,} bytes "
                        f"(goal <= channel.max_queued_bytes, {args.max_queued_bytes:,})")
    if "error" in db_before or "error" in db_after:
        failures.append(f"database unreadable: {db_before.get('error') or db_after.get('error')}")
    result = {
        "pattern": args.pattern, "name": PATTERNS[args.pattern], "ran_s": round(ran, 1),
        "rss_before_mb": round(watch.before_kb / 1024, 1), "rss_peak_mb": round(watch.peak_kb / 1024, 1),
        "rss_after_mb": round(after_kb / 1024, 1), "rss_growth_mb": round(growth_mb, 1),
        "server_closed_at_s": None if closed_at is None else round(closed_at, 1),
        "db_before": db_before, "db_after": db_after, "detail": detail,
        "passed": not failures, "failures": failures,
    }
    line = json.dumps(result)
    print(line, flush=True)
    if args.out:
        with open(args.out, "w") as f:
            f.write(line + "\n")
    return 0 if not failures else 1


# MARK: the table


def fmt_bytes(n):
    return f"{n / 1048576:.1f} MB" if abs(n) >= 1048576 else f"{n / 1024:.0f} KB" if abs(n) >= 1024 else f"{n} B"


def table(files):
    results = []
    for name in files:
        with open(name) as f:
            results.append(json.loads(f.read()))
    results.sort(key=lambda r: r["pattern"])
    print(f"{'pattern':<20} {'ran s':>5} {'RSS before':>10} {'peak':>8} {'after':>8} {'growth':>8} {'closed by server':>16}  result")
    for r in results:
        closed = "—" if r["pattern"] > 4 and r["server_closed_at_s"] is None else (
            "no" if r["server_closed_at_s"] is None else f"at {r['server_closed_at_s']:.1f} s")
        print(f"{str(r['pattern']) + ' ' + r['name']:<20} {r['ran_s']:>5.1f} {r['rss_before_mb']:>7.0f} MB {r['rss_peak_mb']:>5.0f} MB "
              f"{r['rss_after_mb']:>5.0f} MB {r['rss_growth_mb']:>+5.0f} MB {closed:>16}  {'PASS' if r['passed'] else 'FAIL'}")
    print()
    print("stored rows / bytes, before -> after (tables that changed), and what the client saw:")
    for r in results:
        changed = []
        for t in sorted(set(r["db_before"]) | set(r["db_after"])):
            if t == "error":
                continue
            b, a = r["db_before"].get(t, [0, 0]), r["db_after"].get(t, [0, 0])
            if b != a:
                changed.append(f"{t} {b[0]}->{a[0]} rows, {fmt_bytes(b[1])}->{fmt_bytes(a[1])}")
        detail = {k: v for k, v in r["detail"].items() if k != "client_port"}
        print(f"  {r['pattern']} {r['name']}: {'; '.join(changed) or 'no table changed'}")
        print(f"      {json.dumps(detail)}")
        for failure in r["failures"]:
            print(f"      FAIL: {failure}")
    failed = [r for r in results if not r["passed"]]
    print()
    print(f"{len(results) - len(failed)} of {len(results)} patterns passed")
    return 1 if failed else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run")
    r.add_argument("--pattern", type=int, required=True, choices=sorted(PATTERNS))
    r.add_argument("--port", type=int, required=True)
    r.add_argument("--pid", type=int, required=True)
    r.add_argument("--db", default="")
    r.add_argument("--seconds", type=float, default=10)
    r.add_argument("--store-seconds", type=float, default=60)
    r.add_argument("--auth-timeout-ms", type=int, default=3000)
    r.add_argument("--request-timeout-ms", type=int, default=5000)
    r.add_argument("--max-queued-bytes", type=int, default=16 << 20)
    r.add_argument("--settle", type=float, default=2)
    r.add_argument("--out", default="")
    t = sub.add_parser("table")
    t.add_argument("files", nargs="+")
    args = parser.parse_args()
    sys.exit(run(args) if args.command == "run" else table(args.files))


if __name__ == "__main__":
    main()
