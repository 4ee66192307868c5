#!/usr/bin/env python3
"""`gtmesh demo` (the README's first command) works as printed: a 3-DC
cluster in one process answers real DNS, fails over when a DC's backends go
down, follows ECS for geography, takes gtmeshctl commands, stops cleanly on
SIGTERM and restarts from its RocksDB folder."""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

SRC = os.environ.get("GTMESH_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", "..", ".."))
GTMESH = os.environ.get("GTMESH_BIN", os.path.join(SRC, "build", "tools", "gtmesh"))
GTMESHCTL = os.path.join(os.path.dirname(GTMESH), "gtmeshctl")
failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    if not ok:
        failures.append(what)


def dig(port, name, *extra):
    out = subprocess.run(["dig", "@127.0.0.1", "-p", str(port), name, "+short", "+time=1", "+tries=1", *extra],
                         capture_output=True, text=True, timeout=10)
    return sorted(out.stdout.split())


def wait_for(fn, want, seconds):
    deadline = time.monotonic() + seconds
    last = None
    while time.monotonic() < deadline:
        last = fn()
        if last == want:
            return True, last
        time.sleep(0.05)
    return False, last


def start(work):
    ports = os.path.join(work, "ports")
    if os.path.exists(ports):
        os.remove(ports)
    proc = subprocess.Popen([GTMESH, "demo", "--dns-port", "0", "--mesh-port", "0", "--http", "127.0.0.1:0", "--data-dir",
                             os.path.join(work, "data"), "--port-file", ports],
                            stdout=open(os.path.join(work, "demo.out"), "a"), stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 30
    while not os.path.exists(ports) and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
    info = dict(line.split() for line in open(ports)) if os.path.exists(ports) else {}
    global http
    http = info.get("http", "")
    return proc, int(info.get("dns", ":0").rsplit(":", 1)[1]), info.get("mesh", "")


http = ""
RUM_KEY = "demo-rum-key-0123456789"


def post_beacon():
    """(status, body) of one NS1 bulk beacon for dc/fra to the demo's --http."""
    body = json.dumps({"beacons": [{"appid": "demo", "measurements": [
        {"attribution": {"jobid": "dc/fra", "location": {"ipAddress": "203.0.113.9"}},
         "payloads": [{"data": [{"simpleLatency": {"valueMs": 30}}]}]}]}]}).encode()
    req = urllib.request.Request("http://%s/api/v1/rum/beacons" % http, data=body, method="POST",
                                 headers={"Content-Type": "application/json", "X-Gtmesh-Rum-Key": RUM_KEY})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def main():
    if not shutil.which("dig"):
        print("skip: dig missing")
        return 77
    work = tempfile.mkdtemp(prefix="gtmesh-demo-")
    proc = None
    try:
        proc, dns, mesh = start(work)
        check(dns > 0 and mesh, "the demo prints its ports")
        ok, got = wait_for(lambda: dig(dns, "www.demo.example"), ["192.0.2.10"], 30)
        check(ok, "www answers fra from live probes: %s" % got)
        out = open(os.path.join(work, "demo.out")).read()
        check("dig @127.0.0.1 -p %d www.demo.example" % dns in out and "touch " in out,
              "the demo prints the dig commands and the failover to watch")
        ok, got = wait_for(lambda: dig(dns, "geo.demo.example", "+subnet=192.0.2.200/32"), ["198.51.100.40"], 10)
        check(ok, "geographic answer follows the client subnet (New York -> iad): %s" % got)
        check(dig(dns, "geo.demo.example", "+subnet=198.51.100.0/24") == ["192.0.2.40"], "Germany -> fra")
        open(os.path.join(work, "data", "down-fra"), "w").close()
        ok, got = wait_for(lambda: dig(dns, "www.demo.example"), ["198.51.100.10"], 15)
        check(ok, "taking fra's backends down moves www to iad: %s" % got)
        check(dig(dns, "api.demo.example") == ["198.51.100.30"], "and the priority profile to its secondary")
        os.remove(os.path.join(work, "data", "down-fra"))
        ok, got = wait_for(lambda: dig(dns, "www.demo.example"), ["192.0.2.10"], 15)
        check(ok, "and back once a probe succeeds")
        status = subprocess.run([GTMESHCTL, "--decider", mesh, "status"], capture_output=True, text=True, timeout=30)
        check(status.returncode == 0 and status.stdout.count("1 agent(s) connected") == 3,
              "gtmeshctl status sees three DCs with their agents")
        # A one-decider cluster has its majority from the start: it is never
        # ISOLATED (it was, for good, when its single voter led before the
        # decider actor attached: its values never aged and a DC whose agent
        # died was never declared unreachable).
        check(status.returncode == 0 and "ISOLATED" not in status.stdout and "NO MAJORITY" not in status.stdout,
              "the one-decider demo is not isolated: %s" % [l for l in status.stdout.splitlines()
                                                             if "ISOLATED" in l or "consensus:" in l])
        # explain ends with the record's failover budget, from the decider.
        r = subprocess.run([GTMESHCTL, "--decider", mesh, "explain", "www.demo.example", "A"], capture_output=True,
                           text=True, timeout=30)
        budget = [l for l in r.stdout.splitlines() if l.startswith("failover budget: ")]
        check(r.returncode == 0 and len(budget) == 1 and " = detect " in budget[0] and " + ttl " in budget[0]
              and "dominated by " in budget[0], "gtmeshctl explain shows the failover budget: %s" % budget)
        # The demo's --http listener serves the RUM tag and routes (docs/rum.md):
        # refused while the config has no rum: section, taken once it has.
        with urllib.request.urlopen("http://%s/rum.js" % http, timeout=10) as r:
            check(r.status == 200 and b"api/v1/rum/beacons" in r.read(), "the demo serves /rum.js")
        got = post_beacon()
        check(got[0] == 404 and "rum:" in got[1], "beacons are refused without a rum: section: %s" % (got,))
        # A pushed config reaches the in-process agents (their tasks are
        # rebuilt), and the demo still stops cleanly afterwards.
        cfg = open(os.path.join(work, "data", "demo.yaml")).read()
        pushed = os.path.join(work, "pushed.yaml")
        open(pushed, "w").write(cfg.replace("192.0.2.250", "192.0.2.251") +
                                '\nrum:\n  apps:\n    - {name: demo, keys: ["%s"]}\n' % RUM_KEY)
        r = subprocess.run([GTMESHCTL, "--decider", mesh, "push", pushed], capture_output=True, text=True, timeout=30)
        check(r.returncode == 0 and "accepted as version 2" in r.stdout, "a push is committed: %s" % r.stdout.strip())
        ok, _ = wait_for(lambda: subprocess.run([GTMESHCTL, "--decider", mesh, "status"], capture_output=True,
                                                text=True, timeout=30).stdout.count("config version 2, applied"),
                         3, 10)
        check(ok, "the three in-process agents apply it")
        ok, got = wait_for(post_beacon, (200, '{"processed":1,"failed":0}'), 10)
        check(ok, "with the pushed rum: section the demo takes a beacon: %s" % (got,))
        proc.send_signal(signal.SIGTERM)
        try:
            code = proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            code = None
        check(code == 0, "SIGTERM stops the demo cleanly, also after a push")
        proc, dns, mesh = start(work)
        first = dig(dns, "www.demo.example")
        check(first in (["192.0.2.10"], ["192.0.2.250"]), "a restarted demo answers at once: %s" % first)
        status = subprocess.run([GTMESHCTL, "--decider", mesh, "status"], capture_output=True, text=True, timeout=30)
        check("config version 3" in status.stdout, "the restart's new backend ports became config version 3")
        ok, got = wait_for(lambda: dig(dns, "www.demo.example"), ["192.0.2.10"], 30)
        check(ok, "and it serves live answers again: %s" % got)
    finally:
        if proc and proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
        if failures:
            print(open(os.path.join(work, "demo.out")).read()[-4000:])
        shutil.rmtree(work, ignore_errors=True)
    print("%d check(s) failed" % len(failures) if failures else "all checks passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
