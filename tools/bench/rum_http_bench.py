#!/usr/bin/python3
"""RUM ingestion over the decider's --http listener (docs/benchmarks.md, "Real
users' measurements"; issue 43).

A real `gtmesh decider` (no agents, one voter) with a `source: rum` profile
of three endpoints takes NS1 bulk-beacon v3 requests of 1,000 measurements
each (camelCase JSON, clients spread over 10,000 /24 networks), sent over
`--connections` keep-alive connections, `--requests` in all (bounded). The
bodies are made before the clock starts, from a fixed seed.

Reported: the decider's CPU (user + system, from /proc) per request and
beacons stored per CPU-second (one core's rate), the wall-clock rate, and
every request's status (all must be 200 with nothing failed).

  tools/bench/rum_http_bench.py [--requests 400] [--connections 4] [--repeats 3]

GTMESH_BIN picks the binary (default build/tools/gtmesh).
"""

import argparse
import http.client
import json
import os
import random
import re
import shutil
import statistics
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bench_decider  # noqa: E402
SRC = os.path.join(HERE, "..", "..")
GTMESH = os.environ.get("GTMESH_BIN", os.path.join(SRC, "build", "tools", "gtmesh"))
KEY = "bench-key-0123456789abcdef"
JOBS = ["web/eu", "web/us", "web/ap"]

CONFIG = """
datacenters:
  - {name: fra, location: {lat: 50.1, lon: 8.7}}
  - {name: iad, location: {lat: 38.9, lon: -77.4}}
  - {name: sin, location: {lat: 1.3, lon: 103.8}}
zones:
  - name: example.com
    soa: {primary: ns1.example.com., admin: hostmaster.example.com.}
    ns: [ns1.example.com.]
    records:
      - {name: www, type: A, ttl: 30, profile: web}
profiles:
  - name: web
    method: performance
    source: rum
    endpoints:
      - {name: eu, kind: external, target: 192.0.2.1, location: fra}
      - {name: us, kind: external, target: 192.0.2.2, location: iad}
      - {name: ap, kind: external, target: 192.0.2.3, location: sin}
rum:
  window: 10s
  rate_per_address: 10000000
  burst: 100000000
  apps:
    - name: shop
      keys: ["%s"]
""" % KEY


def bodies(count, per_request, seed=7):
    rnd = random.Random(seed)
    out = []
    for _ in range(count):
        ms = []
        for _ in range(per_request):
            net = rnd.randrange(10000)
            ip = "10.%d.%d.%d" % (net // 256 % 256, net % 256, rnd.randrange(1, 255))
            ms.append({"attribution": {"jobid": rnd.choice(JOBS), "location": {"ipAddress": ip}},
                       "payloads": [{"data": [{"simpleLatency": {"valueMs": int(rnd.lognormvariate(3.5, 0.5)) + 1}}]}]})
        out.append(json.dumps({"beacons": [{"appid": "shop", "measurements": ms}]}).encode())
    return out


def accepted(http_addr):
    c = http.client.HTTPConnection(*http_addr.rsplit(":", 1), timeout=10)
    c.request("GET", "/metrics")
    text = c.getresponse().read().decode()
    c.close()
    m = re.search(r"^gtmesh_rum_beacons_accepted_total (\S+)$", text, re.M)
    return float(m.group(1)) if m else 0.0


def send_all(http_addr, work, connections):
    """Each connection sends its share of `work` over one keep-alive
    connection; returns the statuses."""
    host, port = http_addr.rsplit(":", 1)
    statuses = []
    lock = threading.Lock()

    def worker(items):
        c = http.client.HTTPConnection(host, int(port), timeout=30)
        mine = []
        for body in items:
            c.request("POST", "/api/v1/rum/beacons", body=body,
                      headers={"Content-Type": "application/json", "X-Gtmesh-Rum-Key": KEY})
            r = c.getresponse()
            answer = r.read()
            mine.append((r.status, answer))
        c.close()
        with lock:
            statuses.extend(mine)

    threads = [threading.Thread(target=worker, args=(work[i::connections],)) for i in range(connections)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return statuses


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--requests", type=int, default=400)
    ap.add_argument("--per-request", type=int, default=1000)
    ap.add_argument("--connections", type=int, default=4)
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args()
    a.requests = min(a.requests, 5000)  # bounded
    work_dir = tempfile.mkdtemp(prefix="gtmesh-rum-bench-")
    cfg = os.path.join(work_dir, "rum.yaml")
    open(cfg, "w").write(CONFIG)
    proc, found = bench_decider.start(GTMESH, work_dir, cfg)
    try:
        deadline = time.monotonic() + 30
        http_addr = found["http"]
        # RUM is on once the committed config is applied: wait for a 200.
        warm = bodies(1, 10, seed=1)[0]
        while time.monotonic() < deadline:
            if send_all(http_addr, [warm], 1)[0][0] == 200:
                break
            time.sleep(0.2)
        print("making %d bodies of %d measurements..." % (a.requests, a.per_request), flush=True)
        work = bodies(a.requests, a.per_request)
        size = sum(len(b) for b in work) / len(work)
        rows = []
        for r in range(a.repeats):
            before_n, before_cpu, t0 = accepted(http_addr), bench_decider.cpu_seconds(proc.pid), time.monotonic()
            statuses = send_all(http_addr, work, a.connections)
            wall = time.monotonic() - t0
            cpu = bench_decider.cpu_seconds(proc.pid) - before_cpu
            stored = accepted(http_addr) - before_n
            bad = [s for s in statuses if s[0] != 200 or b'"failed":0' not in s[1]]
            rows.append((stored / cpu, stored / wall, cpu / a.requests * 1000, len(bad)))
            print("run %d: %d beacons stored in %.2f s wall, decider CPU %.2f s: %.0f beacons per CPU-second, "
                  "%.0f per wall second, %.2f ms CPU a request; %d request(s) not 200/all stored"
                  % (r + 1, stored, wall, cpu, rows[-1][0], rows[-1][1], rows[-1][2], len(bad)), flush=True)
        print("median of %d: %.0f beacons per CPU-second (one core), %.0f per wall second over %d keep-alive "
              "connections, %.2f ms CPU per request of %d (%.0f KB)"
              % (a.repeats, statistics.median(x[0] for x in rows), statistics.median(x[1] for x in rows),
                 a.connections, statistics.median(x[2] for x in rows), a.per_request, size / 1024))
        return 1 if any(x[3] for x in rows) else 0
    finally:
        bench_decider.stop(proc)
        shutil.rmtree(work_dir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
