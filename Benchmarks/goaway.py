"""The load and the tally of Benchmarks/goaway.sh: posts COUNT Home Assistant Android notifications with distinct
tokens, CONCURRENCY at a time over keep-alive connections, then reads the front end's records and PushRelay's metrics
and prints one line."""
import argparse
import collections
import http.client
import json
import threading
import urllib.request
from concurrent.futures import ThreadPoolExecutor

parser = argparse.ArgumentParser()
parser.add_argument("--server-port", type=int, required=True)
parser.add_argument("--control-port", type=int, required=True)
parser.add_argument("--count", type=int, default=3000)
parser.add_argument("--concurrency", type=int, default=64)
parser.add_argument("--case", nargs=3, required=True)
args = parser.parse_args()
local = threading.local()


def post(i):
    if not hasattr(local, "connection"):
        local.connection = http.client.HTTPConnection("127.0.0.1", args.server_port, timeout=30)
    body = json.dumps({
        "message": f"goaway bench {i}",
        "registration_info": {"app_id": "io.homeassistant.companion.android", "app_version": "1", "os_version": "14"},
        "push_token": f"goaway-{i}",
    })
    try:
        local.connection.request("POST", "/api/sendPush/android/v1", body, {"Content-Type": "application/json"})
        answer = local.connection.getresponse()
        data = answer.read()
        return str(answer.status) if answer.status == 201 else f"{answer.status} {json.loads(data).get('errorCode')}"
    except Exception as error:  # a connection error is an answer too: count it
        local.connection = http.client.HTTPConnection("127.0.0.1", args.server_port, timeout=30)
        return type(error).__name__


with ThreadPoolExecutor(args.concurrency) as pool:
    answers = collections.Counter(pool.map(post, range(args.count)))
state = json.load(urllib.request.urlopen(f"http://127.0.0.1:{args.control_port}/state"))
accepted = [r["token"] for r in state["records"] if r["status"] == 200 and r["token"]]
twice = sum(n - 1 for n in collections.Counter(accepted).values() if n > 1)
metrics = urllib.request.urlopen(f"http://127.0.0.1:{args.server_port}/metrics").read().decode()


def metric(prefix):
    return sum(float(line.split()[-1]) for line in metrics.splitlines() if line.startswith(prefix))


not_processed = metric('pushrelay_provider_resends_total{provider="fcm",reason="not_processed"')
provider_retry = metric('pushrelay_provider_resends_total{provider="fcm",reason="provider_retry"')
resends = f"{not_processed:.0f}+{provider_retry:.0f}"
cap, every, delay = args.case
print(f"{cap:<5} {every:<6} {'0-20ms' if delay == '1' else 'none':<7}  "
      f"{' '.join(f'{k}:{v}' for k, v in sorted(answers.items())):<28} {len(accepted):<10} {twice:<6} "
      f"{state['goAways']:<7} {resends:<14} {metric('pushrelay_provider_possibly_delivered_total'):.0f}")
