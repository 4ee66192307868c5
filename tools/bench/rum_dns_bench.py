#!/usr/bin/python3
"""DNS CPU per query with RUM steering on, against the same record without it
(docs/benchmarks.md, "Real users' measurements"; issue 43: within 5 %).

One real `gtmesh decider` (one voter, no agents, one UDP thread, pinned to
CPU --server-cpu) serves two records with the same three endpoints:
`rum.bench.test` (performance, `source: rum`) and `plain.bench.test`
(performance from the agents' data and distance, as without RUM). Beacons
for the dnsperf client's network (127.0.0.0/24) are posted first, so every
query for `rum` is decided by RUM at the prefix level (checked: its answer
is the endpoint the beacons made fastest). dnsperf (pinned to
--client-cpu) then asks each name for --seconds, the two interleaved,
--rounds times; the decider's CPU (user + system of all its threads, from
/proc) per answered query is compared by median.

  tools/bench/rum_dns_bench.py [--rounds 5] [--seconds 10]

GTMESH_BIN picks the binary (default build/tools/gtmesh). Loopback only;
every load run is bounded (dnsperf -l).
"""

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bench_decider  # noqa: E402
GTMESH = os.environ.get("GTMESH_BIN", os.path.join(HERE, "..", "..", "build", "tools", "gtmesh"))
KEY = "bench-key-0123456789abcdef"
ENDPOINTS = """
    endpoints:
      - {name: eu, kind: external, target: 192.0.2.1, location: fra}
      - {name: us, kind: external, target: 192.0.2.2, location: iad}
      - {name: ap, kind: external, target: 192.0.2.3, location: sin}"""
CONFIG = """
datacenters:
  - {name: fra, location: {lat: 50.1, lon: 8.7}}
  - {name: iad, location: {lat: 38.9, lon: -77.4}}
  - {name: sin, location: {lat: 1.3, lon: 103.8}}
zones:
  - name: bench.test
    soa: {primary: ns1.bench.test., admin: hostmaster.bench.test.}
    ns: [ns1.bench.test.]
    records:
      - {name: rum, type: A, ttl: 30, profile: web-rum}
      - {name: plain, type: A, ttl: 30, profile: web-plain}
profiles:
  - name: web-rum
    method: performance
    source: rum
    rum: {min_samples: 5}""" + ENDPOINTS + """
  - name: web-plain
    method: performance""" + ENDPOINTS + """
rum:
  window: 1s
  apps:
    - {name: shop, keys: ["%s"]}
""" % KEY


def dig(port, name):
    out = subprocess.run(["dig", "@127.0.0.1", "-p", str(port), "+short", "+time=2", "+tries=1", name, "A"],
                         capture_output=True, text=True, timeout=10).stdout.split()
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--seconds", type=int, default=10)
    ap.add_argument("--server-cpu", default="1")
    ap.add_argument("--client-cpu", default="0")
    a = ap.parse_args()
    a.seconds = min(max(a.seconds, 3), 60)  # bounded
    if not shutil.which("dnsperf"):
        print("dnsperf is missing (tools/setup.sh installs it)")
        return 1
    work = tempfile.mkdtemp(prefix="gtmesh-rum-dns-bench-")
    cfg = os.path.join(work, "bench.yaml")
    open(cfg, "w").write(CONFIG)
    proc, found = bench_decider.start(GTMESH, work, cfg, ["taskset", "-c", a.server_cpu])
    try:
        deadline = time.monotonic() + 30
        dns_port = int(found["dns"].rsplit(":", 1)[1])
        http = "http://" + found["http"]
        # Beacons for 127.0.0.0/24: `us` fastest.
        ms = []
        for ep, lat in (("eu", 90), ("us", 20), ("ap", 150)):
            for i in range(20):
                ms.append({"attribution": {"jobid": "web-rum/" + ep, "location": {"ipAddress": "127.0.0.%d" % (i + 1)}},
                           "payloads": [{"data": [{"simpleLatency": {"valueMs": lat + i % 3}}]}]})
        body = json.dumps({"beacons": [{"appid": "shop", "measurements": ms}]}).encode()
        while time.monotonic() < deadline:
            req = urllib.request.Request(http + "/api/v1/rum/beacons", data=body, method="POST",
                                         headers={"Content-Type": "application/json", "X-Gtmesh-Rum-Key": KEY})
            try:
                if urllib.request.urlopen(req, timeout=5).status == 200:
                    break
            except Exception:
                pass
            time.sleep(0.2)
        while time.monotonic() < deadline and dig(dns_port, "rum.bench.test") != ["192.0.2.2"]:
            time.sleep(0.2)
        got = dig(dns_port, "rum.bench.test")
        if got != ["192.0.2.2"]:
            print("RUM does not decide rum.bench.test (answers %s)" % got)
            return 1
        print("rum.bench.test answers %s (RUM: us fastest); plain.bench.test answers %s"
              % (got, dig(dns_port, "plain.bench.test")), flush=True)
        results = {"rum": [], "plain": []}
        for r in range(a.rounds):
            for name in ("rum", "plain"):
                qfile = os.path.join(work, name + ".txt")
                open(qfile, "w").write("%s.bench.test A\n" % name)
                before = bench_decider.cpu_seconds(proc.pid)
                out = subprocess.run(["taskset", "-c", a.client_cpu, "dnsperf", "-s", "127.0.0.1", "-p", str(dns_port),
                                      "-d", qfile, "-l", str(a.seconds), "-c", "10", "-q", "100", "-t", "1"],
                                     capture_output=True, text=True, timeout=a.seconds + 30).stdout
                cpu = bench_decider.cpu_seconds(proc.pid) - before
                done = int(re.search(r"Queries completed:\s+(\d+)", out).group(1))
                results[name].append(cpu / done * 1e6)
                print("round %d %-5s: %d answered, decider CPU %.2f s: %.3f us a query"
                      % (r + 1, name, done, cpu, results[name][-1]), flush=True)
        m_rum, m_plain = statistics.median(results["rum"]), statistics.median(results["plain"])
        print("median of %d x %d s: RUM %.3f us a query, without RUM %.3f us: %+.1f %%"
              % (a.rounds, a.seconds, m_rum, m_plain, (m_rum / m_plain - 1) * 100))
        return 0
    finally:
        bench_decider.stop(proc)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
