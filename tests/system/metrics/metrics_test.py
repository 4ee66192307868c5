#!/usr/bin/env python3
"""Every node's operations listener (--http), with real tools:

  1. the demo (decider + responder + agents in one process): /healthz,
     /readyz, and a real Prometheus server scraping it every second sees
     gtmesh_dc_up{dc="fra"} go from 1 to 0 after `touch down-fra` (asked
     through Prometheus' own HTTP query API), fra's backends count probe
     failures, and answers per DC move from fra to iad in
     gtmesh_answers_total; every example alert rule evaluates;
  2. `promtool check metrics` passes on the output of every kind of node:
     the demo, a decider and an agent of tools/cluster.sh, `gtmesh serve`;
  3. labels never carry client addresses: ECS queries from many networks
     add no series;
  4. a bad --http address is refused with a clear error and exit status;
  5. --log-format json writes one JSON object per line, --log-level filters;
  6. in a TLS cluster the listener is HTTPS, and the console's drain needs an
     operator certificate of the cluster CA;
  7. hostile clients stay bounded: endless headers get 431 and the node's
     memory does not grow, a client trickling its request is cut off,
     /healthz answers while 100 clients trickle and 200 sit idle, past 512
     the oldest are closed, a POST without Content-Length gets 411, and a
     node with slow clients connected still stops at once.
"""
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "tools"))
from free_port import free_port  # noqa: E402

SRC = os.environ.get("GTMESH_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", "..", ".."))
GTMESH = os.environ.get("GTMESH_BIN", os.path.join(SRC, "build", "tools", "gtmesh"))
GTMESHCTL = os.path.join(os.path.dirname(GTMESH), "gtmeshctl")
CLUSTER = os.path.join(SRC, "tools", "cluster.sh")
failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    if not ok:
        failures.append(what)
    return ok


def http_get(url, timeout=5):
    """(status, body); status 0 when nothing answers."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()
    except OSError:
        return 0, ""


def wait_for(fn, seconds, step=0.1):
    deadline = time.monotonic() + seconds
    last = None
    while time.monotonic() < deadline:
        last = fn()
        if last:
            return last
        time.sleep(step)
    return last


def sample(text, name, labels):
    """The value of one series in exposition text, or None."""
    want = name + "{" + ",".join('%s="%s"' % kv for kv in labels.items()) + "}" if labels else name
    for line in text.splitlines():
        if line.startswith(want + " "):
            return float(line.split()[-1])
    return None


def promtool_ok(text, what):
    r = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True, text=True, timeout=30)
    return check(r.returncode == 0 and "gtmesh_" in text,
                 "promtool check metrics passes on %s (%d series)%s" %
                 (what, sum(1 for l in text.splitlines() if l and not l.startswith("#")), r.stdout + r.stderr))


def dig(port, name, *extra):
    out = subprocess.run(["dig", "@127.0.0.1", "-p", str(port), name, "+short", "+time=1", "+tries=1", *extra],
                         capture_output=True, text=True, timeout=10)
    return sorted(out.stdout.split())


def stop(proc):
    if proc and proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def prometheus_value(api, query):
    status, body = http_get(api + "/api/v1/query?" + urllib.parse.urlencode({"query": query}))
    if status != 200:
        return None
    result = json.loads(body)["data"]["result"]
    return result[0]["value"][1] if result else None


def demo_and_prometheus(work):
    ports = os.path.join(work, "demo.ports")
    data = os.path.join(work, "demo")
    demo = subprocess.Popen([GTMESH, "demo", "--dns-port", "0", "--mesh-port", "0", "--http", "127.0.0.1:0",
                             "--data-dir", data, "--port-file", ports],
                            stdout=open(os.path.join(work, "demo.out"), "w"), stderr=subprocess.STDOUT)
    prom = None
    try:
        if not check(wait_for(lambda: os.path.exists(ports), 30), "the demo writes its port file"):
            return
        info = dict(line.split() for line in open(ports))
        base = "http://" + info["http"]
        dns = int(info["dns"].rsplit(":", 1)[1])
        check(http_get(base + "/healthz") == (200, "ok\n"), "/healthz answers 200 at once")
        ready = wait_for(lambda: http_get(base + "/readyz")[0] == 200, 30)
        check(ready, "/readyz turns 200 once the decider serves a snapshot and the agents delivered a round")
        up = wait_for(lambda: sample(http_get(base + "/metrics")[1], "gtmesh_dc_up", {"dc": "fra"}) == 1, 30)
        check(up, "gtmesh_dc_up{dc=\"fra\"} is 1 on /metrics")
        promtool_ok(http_get(base + "/metrics")[1], "the demo")

        # A real Prometheus scraping the demo every second.
        prom_port = free_port()
        cfg = os.path.join(work, "prometheus.yml")
        rules = os.path.join(SRC, "deploy", "prometheus", "gtmesh-alerts.yml")
        r = subprocess.run(["promtool", "check", "rules", rules], capture_output=True, text=True, timeout=30)
        check(r.returncode == 0, "promtool check rules passes on deploy/prometheus/gtmesh-alerts.yml")
        open(cfg, "w").write(
            "global: {scrape_interval: 1s, evaluation_interval: 1s}\n"
            "rule_files: ['%s']\n"
            "scrape_configs:\n"
            "  - job_name: gtmesh-demo\n"
            "    static_configs: [{targets: ['%s']}]\n" % (rules, info["http"]))
        prom = subprocess.Popen(["prometheus", "--config.file=" + cfg, "--storage.tsdb.path=" + os.path.join(work, "tsdb"),
                                 "--web.listen-address=127.0.0.1:%d" % prom_port, "--log.level=warn"],
                                stdout=open(os.path.join(work, "prometheus.out"), "w"), stderr=subprocess.STDOUT)
        api = "http://127.0.0.1:%d" % prom_port
        got = wait_for(lambda: prometheus_value(api, 'gtmesh_dc_up{dc="fra"}') == "1", 60, 0.5)
        check(got, "Prometheus scraped gtmesh_dc_up{dc=\"fra\"} = 1")
        check(prometheus_value(api, 'up{job="gtmesh-demo"}') == "1", "Prometheus sees the target up")

        def rules_evaluated():
            status, body = http_get(api + "/api/v1/rules")
            if status != 200:
                return None
            found = [r for g in json.loads(body)["data"]["groups"] for r in g["rules"]]
            return found if found and all(r.get("health") == "ok" for r in found) else None
        found = wait_for(rules_evaluated, 30, 0.5)
        check(bool(found), "Prometheus evaluates every example alert against the demo without error (%d rules)" %
              len(found or []))

        before = http_get(base + "/metrics")[1]
        consecutive = lambda text: [float(l.split()[-1]) for l in text.splitlines()
                                    if l.startswith("gtmesh_probe_consecutive_failures{")]
        check(len(consecutive(before)) >= 6 and max(consecutive(before)) == 0 and
              "gtmesh_probe_duration_seconds_bucket{target=" in before,
              "every backend has probe latency and 0 consecutive failures while up")
        for _ in range(5):
            dig(dns, "www.demo.example")
        open(os.path.join(data, "down-fra"), "w").close()
        t0 = time.monotonic()
        got = wait_for(lambda: prometheus_value(api, 'gtmesh_dc_up{dc="fra"}') == "0", 60, 0.5)
        check(got, "after `touch down-fra` Prometheus sees gtmesh_dc_up{dc=\"fra\"} = 0 (%.1f s)" %
              (time.monotonic() - t0))
        check(prometheus_value(api, 'gtmesh_dc_up{dc="iad"}') == "1", "while iad stays 1")
        # The operator's view of the same event: gtmeshctl status --json and
        # history with UTC times.
        ctl = lambda *a: subprocess.run([GTMESHCTL, "--decider", info["mesh"], *a], capture_output=True, text=True,
                                        timeout=30)
        r = ctl("status", "--json")
        try:
            dcs = {d["name"]: d["up"] for d in json.loads(r.stdout)["decider"]["dcs"]}
        except (ValueError, KeyError, TypeError):
            dcs = None
        check(dcs == {"fra": False, "iad": True, "sin": True}, "gtmeshctl status --json: fra down, iad and sin up: %s" %
              (dcs if dcs is not None else r.stdout[:300] + r.stderr))
        r = ctl("history", "--since", "10m")
        iso = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z ")
        lines = [l for l in r.stdout.splitlines() if l]
        check(r.returncode == 0 and lines and all(iso.match(l) and len(l) <= 100 for l in lines) and
              any(" fra " in l and "up -> down" in l for l in lines),
              "gtmeshctl history --since 10m: UTC times, lines within 100 columns, fra's fall:\n" + r.stdout)
        if shutil.which("script"):
            # On a terminal (a pty from script(1)) long lines wrap at 100 columns.
            tty = subprocess.run(["script", "-qc", "%s --decider %s status; %s --decider %s explain www.demo.example" %
                                  (GTMESHCTL, info["mesh"], GTMESHCTL, info["mesh"]), "/dev/null"],
                                 capture_output=True, text=True, timeout=60).stdout.replace("\r", "")
            widest = max((len(l) for l in tty.splitlines()), default=0)
            check("mesh links:" in tty and "PICKED" in tty and widest <= 100,
                  "gtmeshctl status and explain fit a 100-column terminal (widest line %d)" % widest)
        r = ctl("history", "--since", "next tuesday")
        check(r.returncode == 2 and "--since" in r.stderr, "history --since with nonsense is a usage error")
        failing = consecutive(http_get(base + "/metrics")[1])
        check(sum(1 for v in failing if v >= 1) == 2,
              "fra's two backends count consecutive probe failures: %s" % failing)
        for _ in range(5):
            dig(dns, "www.demo.example")
        after = http_get(base + "/metrics")[1]
        www = {"record": "www.demo.example.", "type": "A"}  # DC mode: no endpoint
        fra_before = sample(before, "gtmesh_answers_total", dict(www, dc="fra", endpoint="")) or 0
        iad_before = sample(before, "gtmesh_answers_total", dict(www, dc="iad", endpoint="")) or 0
        fra_after = sample(after, "gtmesh_answers_total", dict(www, dc="fra", endpoint="")) or 0
        iad_after = sample(after, "gtmesh_answers_total", dict(www, dc="iad", endpoint="")) or 0
        check(fra_after - fra_before == 5 and iad_after - iad_before == 5,
              "gtmesh_answers_total counts www's answers per DC: fra +%d before, iad +%d after the failover" %
              (fra_after - fra_before, iad_after - iad_before))
        check(sample(after, "gtmesh_dns_queries_by_type_total", {"qtype": "A"}) >= 10, "queries are counted by qtype")

        # Client addresses never become labels.
        # (The first round may add a series per DC newly answered; the
        # second, from 20 other networks, must add none.)
        series = lambda text: sum(1 for l in text.splitlines() if l and not l.startswith("#"))
        for i in range(20):
            dig(dns, "geo.demo.example", "+subnet=203.0.%d.0/24" % i)
        n_before = series(http_get(base + "/metrics")[1])
        for i in range(20):
            dig(dns, "geo.demo.example", "+subnet=198.18.%d.0/24" % i)
        text = http_get(base + "/metrics")[1]
        check(series(text) == n_before and "203.0." not in text and "198.18." not in text,
              "20 more ECS client networks add no series (%d -> %d) and no label names one" %
              (n_before, series(text)))
    finally:
        stop(prom)
        stop(demo)


def cluster_nodes(work):
    d = os.path.join(work, "cluster")
    r = subprocess.run([CLUSTER, "start", d], capture_output=True, text=True, timeout=120)
    try:
        if not check(r.returncode == 0, "tools/cluster.sh starts deciders and agents with --http"):
            print(r.stdout, r.stderr)
            return
        env = dict(l.split("=", 1) for l in open(os.path.join(d, "cluster.env")).read().split("\n") if "=" in l)
        decider = "http://" + env["HTTP1"]
        agent = "http://" + env["AGENT_HTTP_FRA"]
        check(wait_for(lambda: http_get(decider + "/readyz")[0] == 200, 30), "a decider's /readyz turns 200")
        check(wait_for(lambda: http_get(agent + "/readyz")[0] == 200, 30), "an agent's /readyz turns 200")
        text = wait_for(lambda: (lambda t: t if "gtmesh_peer_connected" in t else None)(http_get(decider + "/metrics")[1]), 30)
        promtool_ok(text or "", "a decider of tools/cluster.sh")
        check(re.search(r'^gtmesh_peer_connected\{peer="[^"]+"\} 1$', text or "", re.M) is not None,
              "the decider reports its peers connected")
        promtool_ok(http_get(agent + "/metrics")[1], "an agent of tools/cluster.sh")
    finally:
        subprocess.run([CLUSTER, "stop", d], capture_output=True, timeout=60)


def tls_cluster(work):
    """A TLS cluster (tools/cluster.sh --tls): the deciders' listener is HTTPS
    with the node certificate; anyone with the CA reads it; the console's
    drain needs an operator certificate of the cluster CA."""
    d = os.path.join(work, "tls-cluster")
    r = subprocess.run([CLUSTER, "start", d, "--tls"], capture_output=True, text=True, timeout=120)
    try:
        if not check(r.returncode == 0, "tools/cluster.sh start --tls"):
            print(r.stdout, r.stderr)
            return
        env = dict(l.split("=", 1) for l in open(os.path.join(d, "cluster.env")).read().split("\n") if "=" in l)
        tls = os.path.join(d, "tls")
        port = env["HTTP1"].rsplit(":", 1)[1]
        url = "https://decider1:%s" % port  # the certificate names the node, not its address

        def curl(path, *extra, method="GET"):
            out = subprocess.run(["curl", "-s", "--max-time", "10", "--cacert", os.path.join(tls, "ca.pem"),
                                  "--resolve", "decider1:%s:127.0.0.1" % port, "-X", method,
                                  *(["-d", "", "-H", "X-Gtmesh-Operator: test"] if method == "POST" else []),
                                  *extra, "-w", "\n%{http_code}", url + path], capture_output=True, text=True, timeout=30)
            body, _, code = out.stdout.rpartition("\n")
            return int(code or 0), body

        ready = wait_for(lambda: curl("/readyz")[0] == 200, 30)
        check(ready, "over HTTPS (node certificate, cluster CA) /readyz turns 200")
        code, text = curl("/metrics")
        check(code == 200 and "gtmesh_dc_up" in text, "/metrics reads over HTTPS without a client certificate")
        # Ready (a snapshot) comes before the Raft log has a leader; a drain
        # needs one, as with gtmeshctl (which retries): wait for it first.
        import shlex
        ctl1 = shlex.split(env["GTMESHCTL1"].strip('"'))
        def has_leader():
            out = subprocess.run(ctl1 + ["status"], capture_output=True, text=True, timeout=30).stdout
            line = next((l for l in out.splitlines() if l.strip().startswith("consensus:")), "")
            return "leader none" not in line and "NO MAJORITY" not in line and ", leader " in line
        check(wait_for(has_leader, 30, 0.5), "the TLS cluster's Raft log has a leader")
        agent = ["--cert", os.path.join(tls, "agent-fra.pem"), "--key", os.path.join(tls, "agent-fra.key")]
        op = ["--cert", os.path.join(tls, "gtmeshctl.pem"), "--key", os.path.join(tls, "gtmeshctl.key")]
        refused = (curl("/api/drain?dc=iad", method="POST")[0], curl("/api/drain?dc=iad", *agent, method="POST")[0])
        check(refused == (403, 403), "a drain without a certificate, or with an agent's, is refused: %s" % (refused,))
        code, body = curl("/api/drain?dc=iad", *op, method="POST")
        check(code == 200 and '"ok":true' in body, "an operator certificate drains iad: %s" % body)
        drained = wait_for(lambda: 'gtmesh_dc_drained{dc="iad"} 1' in curl("/metrics")[1], 10)
        check(drained, "and the drain is committed and applied")
        code, body = curl("/api/undrain?dc=iad", *op, method="POST")
        check(code == 200, "undrain with the operator certificate")
    finally:
        subprocess.run([CLUSTER, "stop", d], capture_output=True, timeout=60)


SERVE_ZONE = os.path.join(SRC, "tests", "system", "dns_serve", "zone.yaml")


def start_serve(work):
    """`gtmesh serve` of the dns_serve zone with --http: (process, DNS port, HTTP port)."""
    port, http = free_port(), free_port()
    proc = subprocess.Popen([GTMESH, "serve", "--config", SERVE_ZONE, "--listen", "127.0.0.1:%d" % port,
                             "--http", "127.0.0.1:%d" % http],
                            stdout=subprocess.DEVNULL, stderr=open(os.path.join(work, "serve.out"), "a"))
    return proc, port, http


def serve_node(work):
    zone = SERVE_ZONE
    proc, port, http = start_serve(work)
    try:
        base = "http://127.0.0.1:%d" % http
        check(wait_for(lambda: http_get(base + "/readyz")[0] == 200, 30), "gtmesh serve: /readyz 200")
        for _ in range(3):
            dig(port, "www.example.test")
        dig(port, "nope.example.test")
        text = http_get(base + "/metrics")[1]
        promtool_ok(text, "gtmesh serve")
        # Bodies and other methods are refused before anything more is read.
        def send(method, data=None):
            req = urllib.request.Request(base + "/metrics", data=data, method=method)
            try:
                return urllib.request.urlopen(req, timeout=5).status
            except urllib.error.HTTPError as e:
                return e.code
            except OSError:
                return 0
        codes = (send("POST", b"x" * 100000), send("DELETE"), send("GET"))
        check(codes == (413, 405, 200), "a request body is refused (413), other methods too (405): %s" % (codes,))
        check(sample(text, "gtmesh_dns_responses_total", {"rcode": "NXDOMAIN"}) == 1 and
              sample(text, "gtmesh_answers_total",
                     {"record": "www.example.test.", "type": "A", "dc": "", "endpoint": ""}) == 3,
              "gtmesh serve counts NXDOMAIN and answers per record")
    finally:
        stop(proc)
    # Structured logs: --log-format json gives one JSON object per line;
    # --log-level warn keeps the info lines out.
    def serve_log(*extra):
        p = subprocess.Popen([GTMESH, "serve", "--config", zone, "--listen", "127.0.0.1:0", *extra],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        time.sleep(1.0)
        p.send_signal(signal.SIGTERM)
        return p.communicate(timeout=30)[1]
    lines = [l for l in serve_log("--log-format", "json").splitlines() if l]
    try:
        parsed = [json.loads(l) for l in lines]
    except ValueError:
        parsed = []
    check(len(parsed) >= 2 and len(parsed) == len(lines) and
          all(set(p) == {"ts", "level", "component", "msg"} for p in parsed) and
          any(p["msg"].startswith("listening on") and p["level"] == "info" for p in parsed),
          "--log-format json: every line is one JSON object (ts, level, component, msg): %s" % lines[:3])
    quiet = serve_log("--log-level", "warn")
    check("listening on" not in quiet and "final counters" not in quiet, "--log-level warn drops info lines")
    bad = subprocess.run([GTMESH, "serve", "--log-format", "xml"], capture_output=True, text=True, timeout=30)
    check(bad.returncode == 2 and "--log-format xml" in bad.stderr, "a bad --log-format is a usage error")
    bad = subprocess.run([GTMESH, "serve", "--config", zone, "--listen", "127.0.0.1:0", "--http", "nonsense"],
                         capture_output=True, text=True, timeout=30)
    check(bad.returncode != 0 and "--http nonsense" in bad.stderr, "a bad --http address is refused: %s" %
          bad.stderr.strip())
    # Start-up failures are log lines too: in JSON mode a config's errors
    # (one per line, naming file, line and field) and a bad listener are
    # JSON objects at level error.
    typo = os.path.join(work, "typo.yaml")
    open(typo, "w").write(open(zone).read().replace("records:", "recrods:", 1))
    for what, argv in (("a config with a typo", ["--config", typo, "--listen", "127.0.0.1:0"]),
                       ("a bad --http", ["--config", zone, "--listen", "127.0.0.1:0", "--http", "nonsense"])):
        bad = subprocess.run([GTMESH, "serve", *argv, "--log-format", "json"], capture_output=True, text=True,
                             timeout=30)
        lines = [l for l in bad.stderr.splitlines() if l]
        try:
            parsed = [json.loads(l) for l in lines]
        except ValueError:
            parsed = []
        check(bad.returncode != 0 and parsed and len(parsed) == len(lines) and
              any(p["level"] == "error" for p in parsed) and
              (what != "a config with a typo" or any("typo.yaml:" in p["msg"] for p in parsed)),
              "--log-format json: %s fails with JSON error lines: %s" % (what, lines[:3]))


def rss_kb(pid):
    for line in open("/proc/%d/status" % pid):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def hostile_clients(work):
    proc, port, http = start_serve(work)
    base = "http://127.0.0.1:%d" % http
    held = []
    try:
        check(wait_for(lambda: http_get(base + "/readyz")[0] == 200, 30), "hostile clients: gtmesh serve is up")
        refused = lambda reason: sample(http_get(base + "/metrics")[1], "gtmesh_http_connections_refused_total",
                                        {"reason": reason}) or 0
        before = rss_kb(proc.pid)
        # Endless header lines (each under any per-line limit): 431, then the
        # connection is closed; at most 64 MB are offered in at most 10 s.
        s = socket.create_connection(("127.0.0.1", http), timeout=5)
        s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
        line = b"X-A: " + b"a" * 4000 + b"\r\n"
        sent, t0, reply = 0, time.monotonic(), b""
        try:
            while sent < 64 << 20 and time.monotonic() - t0 < 10:
                s.sendall(line * 16)
                sent += len(line) * 16
        except OSError:
            pass
        try:
            reply = s.recv(200)
        except OSError:
            pass
        s.close()
        grown = rss_kb(proc.pid) - before
        check(sent < 8 << 20 and grown < 16 * 1024 and refused("too_large") >= 1,
              "endless headers are cut off after %d KB (the node grew %d KB; reply %r)" %
              (sent // 1024, grown, reply[:45]))
        # A client trickling its request: cut off within the 5 s head timeout.
        s = socket.create_connection(("127.0.0.1", http), timeout=15)
        s.sendall(b"GET /metrics HTTP/1.1\r\n")
        t0, closed = time.monotonic(), False
        s.settimeout(1)
        while time.monotonic() - t0 < 12 and not closed:
            try:
                s.sendall(b"X")
                closed = s.recv(100) == b""
            except socket.timeout:
                pass
            except OSError:
                closed = True
        took = time.monotonic() - t0
        s.close()
        check(closed and 4 <= took <= 8 and refused("timeout") >= 1,
              "a client trickling its request is cut off after %.1f s (head timeout 5 s)" % took)
        # 100 clients trickling their requests (a byte every 0.2 s) and 200
        # idle ones: none holds a worker, /healthz answers meanwhile (it
        # answered 0 of 60 when each slow client held a worker).
        trickling = [socket.create_connection(("127.0.0.1", http), timeout=5) for _ in range(100)]
        held = [socket.create_connection(("127.0.0.1", http), timeout=5) for _ in range(200)]
        for c in trickling:
            c.sendall(b"GET /metrics HTTP/1.1\r\n")
        latencies, answered = [], 0
        t_end = time.monotonic() + 3
        while time.monotonic() < t_end and len(latencies) < 30:
            for c in trickling:
                try:
                    c.sendall(b"X")
                except OSError:
                    pass
            t0 = time.monotonic()
            answered += http_get(base + "/healthz", timeout=1)[0] == 200
            latencies.append(time.monotonic() - t0)
            time.sleep(0.1)
        latencies.sort()
        open_still = sum(1 for c in trickling + held if not peer_closed(c))
        check(answered == len(latencies) and latencies[-1] < 1.0,
              "with 100 clients trickling and 200 idle, /healthz answers %d of %d (median %.1f ms, worst %.1f ms)"
              % (answered, len(latencies), 1000 * latencies[len(latencies) // 2], 1000 * latencies[-1]))
        check(open_still == 300, "and the slow clients are still being read, not shed (%d of 300 open)" % open_still)
        # 400 more: the oldest of the 512 being read make room for newcomers,
        # and a request sent at once still gets its answer.
        evicted_before = refused("evicted")
        flood = [socket.create_connection(("127.0.0.1", http), timeout=5) for _ in range(400)]
        code = http_get(base + "/healthz", timeout=2)[0]
        evicted = refused("evicted") - evicted_before
        check(code == 200 and evicted >= 150, "past 512 connections being read the oldest are closed (%d evicted) and "
              "/healthz still answers (%s)" % (evicted, code))
        for c in trickling + held + flood:
            c.close()
        held = []
        # A POST without Content-Length: 411 at once, not a 5 s wait for a body.
        s = socket.create_connection(("127.0.0.1", http), timeout=5)
        t0 = time.monotonic()
        s.sendall(b"POST /api/drain?dc=fra HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Gtmesh-Operator: x\r\n\r\n")
        reply = s.recv(100)
        took = time.monotonic() - t0
        s.close()
        check(reply.startswith(b"HTTP/1.1 411") and took < 1, "a POST without Content-Length gets 411 in %.2f s: %r"
              % (took, reply[:30]))
        # Slow clients connected do not hold up a stop.
        for _ in range(4):
            c = socket.create_connection(("127.0.0.1", http), timeout=5)
            c.sendall(b"GET /metrics HTTP/1.1\r\n")
            held.append(c)
        time.sleep(0.3)
        t0 = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        took = time.monotonic() - t0
        check(proc.poll() is not None and took < 2.5, "with 4 slow clients connected, serve stops in %.1f s" % took)
    finally:
        for c in held:
            c.close()
        stop(proc)


def peer_closed(sock):
    """True when the peer closed `sock` (EOF or reset)."""
    timeout = sock.gettimeout()
    sock.setblocking(False)  # with a timeout set, recv() would wait for it first
    try:
        return sock.recv(1, socket.MSG_PEEK) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True
    finally:
        sock.settimeout(timeout)


def main():
    import resource
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(max(soft, 4096), hard), hard))  # the hostile clients' sockets
    for tool in ("dig", "promtool", "prometheus", "curl"):
        if not shutil.which(tool):
            print("skip: %s missing (tools/setup.sh installs it)" % tool)
            return 77
    work = tempfile.mkdtemp(prefix="gtmesh-metrics-")
    try:
        demo_and_prometheus(work)
        cluster_nodes(work)
        tls_cluster(work)
        serve_node(work)
        hostile_clients(work)
        if failures:
            for f in ("demo.out", "prometheus.out", "serve.out"):
                p = os.path.join(work, f)
                if os.path.exists(p):
                    print("--- %s\n%s" % (f, open(p).read()[-3000:]))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("%d check(s) failed" % len(failures) if failures else "all checks passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
