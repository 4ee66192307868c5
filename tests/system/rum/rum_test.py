#!/usr/bin/python3
"""System test: real users' measurements end to end (issue 43, docs/rum.md).

A real `gtmesh decider` (no agents: the agents' chain alone would answer by
location) runs a profile with `source: rum`; beacons and NEL reports are
POSTed to its --http listener over loopback, and dig asks its DNS port:

  1. /rum.js and the tag's /api/v1/rum/config are served (CORS for the
     app's origin only);
  2. beacons saying the endpoint dig does not answer is the faster one for
     203.0.113.0/24 move that network's answers (ECS) to it, while another
     network's answers stay where they were;
  3. gtmeshctl explain shows each candidate's evidence (n, p50,
     availability, age, the key level);
  4. beacons saying it became slow move the answers back;
  5. NEL reports (W3C form, browsers' own) of failures at the fast
     endpoint's address lower its availability under the threshold and move
     the answers of the reporting network (the resolver's, no ECS);
  6. a restart keeps the cells: answers follow them before any new beacon;
  7. a wrong key, no key, a forged appid, an oversized body, malformed JSON,
     a future timestamp, an unknown endpoint and a flood are refused with
     401/403/413/400/IngestResult.failed/429, counted by reason in /metrics,
     and change no answer; /healthz and DNS keep answering.
"""

import json
import os
import re
import signal
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "dns_lib"))
from gtmesh_dns import Checks, UdpClient, _die_with_parent, dig, free_port, make_query, section  # noqa: E402
from cluster_helpers import wait_for  # noqa: E402

SRC = os.environ.get("GTMESH_SOURCE_DIR", os.path.join(HERE, "..", "..", ".."))
GTMESH = os.environ.get("GTMESH_BIN", os.path.join(SRC, "build", "tools", "gtmesh"))
GTMESHCTL = os.path.join(os.path.dirname(GTMESH), "gtmeshctl")
KEY = "system-test-key-0123456789"
EU, US = "10.9.0.1", "10.9.0.2"
JOB = {EU: "web/eu", US: "web/us"}
ORIGIN = "https://shop.example"

CONFIG = f"""
datacenters:
  - {{name: fra, location: {{lat: 50.1, lon: 8.7}}}}
  - {{name: iad, location: {{lat: 38.9, lon: -77.4}}}}
zones:
  - name: example.com
    soa: {{primary: ns1.example.com., admin: hostmaster.example.com.}}
    ns: [ns1.example.com.]
    records:
      - {{name: www, type: A, ttl: 5, profile: web}}
profiles:
  - name: web
    method: performance
    source: rum
    rum: {{min_samples: 5, keep_within: 10%, availability_threshold: 90%}}
    endpoints:
      - {{name: eu, kind: external, target: {EU}, location: fra}}
      - {{name: us, kind: external, target: {US}, location: iad}}
rum:
  window: 1s
  half_life: 1m
  max_age: 10m
  max_body: 65536
  rate_per_address: 2000
  burst: 5000
  apps:
    - name: shop
      keys: ["{KEY}"]
      origins: ["{ORIGIN}"]
      measure:
        - {{job: web/eu, url: "http://{EU}/rum.gif"}}
        - {{job: web/us, url: "http://{US}/rum.gif"}}
"""


class Http:
    """The decider's --http listener; over HTTPS when `ca` (a PEM file the
    listener's certificate verifies against) is given."""

    def __init__(self, hostport, ca=None):
        self.base = ("https://" if ca else "http://") + hostport
        self.context = ssl.create_default_context(cafile=ca) if ca else None

    def request(self, method, path, body=None, headers=None):
        """(status, body text, headers dict) — errors are answers too."""
        req = urllib.request.Request(self.base + path, data=body, method=method, headers=headers or {})
        try:
            with urllib.request.urlopen(req, timeout=10, context=self.context) as r:
                return r.status, r.read().decode(errors="replace"), dict(r.headers)
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode(errors="replace"), dict(e.headers)
        except (ConnectionError, urllib.error.URLError) as e:
            return None, str(e), {}

    def post(self, path, doc, key=KEY, raw=None):
        body = raw if raw is not None else json.dumps(doc).encode()
        headers = {"Content-Type": "application/json"}
        if key is not None:
            headers["X-Gtmesh-Rum-Key"] = key
        return self.request("POST", path, body, headers)


def beacons(samples, app="shop"):
    """NS1 bulk-beacon v3 JSON: samples = [(job, client ip or None, ms, ts_ns or None)]."""
    ms = []
    for job, ip, latency, ts in samples:
        m = {"attribution": {"jobid": job}, "payloads": [{"data": [{"simpleLatency": {"valueMs": latency}}]}]}
        if ip:
            m["attribution"]["location"] = {"ipAddress": ip}
        if ts:
            m["payloads"][0]["timstampEpochNs"] = str(ts)
        ms.append(m)
    return {"beacons": [{"appid": app, "measurements": ms}]}


def answer(dns, ecs=None):
    args = ["www.example.com", "A", "+time=2", "+tries=1"]
    if ecs:
        args.append("+subnet=" + ecs)
    rows = section(dig(dns[0], dns[1], *args), "ANSWER")
    return sorted(r[4] for r in rows)


def metrics(http):
    status, text, _ = http.request("GET", "/metrics")
    out = {}
    for m in re.finditer(r"^(gtmesh_rum_\w+)(\{[^}]*\})? (\S+)$", text or "", re.M):
        out[m.group(1) + (m.group(2) or "")] = float(m.group(3))
    return out


def refused(http, reason):
    return metrics(http).get('gtmesh_rum_refused_total{reason="%s"}' % reason, 0.0)


class Decider:
    """A `gtmesh decider` on loopback ports, restartable on its data dir;
    `mesh` and `peers` make it one of a cluster."""

    def __init__(self, work, config, name="d1", mesh=None, peers=(), extra=(), https_ca=None):
        self.work, self.config, self.name = work, config, name
        self.mesh_listen, self.peers = mesh, list(peers)
        self.extra, self.https_ca = list(extra), https_ca
        self.proc = None
        self.log_path = os.path.join(work, name + ".log")

    def start(self, wait=True):
        self.ports = os.path.join(self.work, self.name + ".ports")
        if os.path.exists(self.ports):
            os.remove(self.ports)
        args = [GTMESH, "decider", "--config", self.config, "--data-dir", os.path.join(self.work, self.name),
                "--dns", "127.0.0.1:0", "--http", "127.0.0.1:0", "--port-file", self.ports]
        if self.mesh_listen:
            args += ["--listen", self.mesh_listen, "--name", self.name]
            for p in self.peers:
                args += ["--peer", p]
        else:
            args += ["--listen", "127.0.0.1:0", "--advertise", self.name + ":1"]
        args += self.extra
        self.proc = subprocess.Popen(args, stdout=open(self.log_path, "a"), stderr=subprocess.STDOUT,
                                     preexec_fn=_die_with_parent)
        if wait:
            self.wait()

    def wait(self):
        if not wait_for(lambda: os.path.exists(self.ports) and os.path.getsize(self.ports) > 0, 30):
            raise RuntimeError("the decider did not start: " + open(self.log_path).read()[-3000:])
        found = dict(line.split() for line in open(self.ports) if line.strip())
        host, port = found["dns"].rsplit(":", 1)
        self.dns = (host, int(port))
        self.http = Http(found["http"], self.https_ca)
        self.mesh = found["mesh"]
        wait_for(lambda: answer(self.dns), 30)

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def shared():
    """Two deciders: beacons taken by one move the other's answers (the
    rum-samples it sends its peers, not the Raft log)."""
    checks = Checks("rum_shared")
    work = tempfile.mkdtemp(prefix="gtmesh-rum-shared-")
    config = os.path.join(work, "rum.yaml")
    open(config, "w").write(CONFIG)
    meshes = ["127.0.0.1:%d" % free_port() for _ in range(2)]
    ds = [Decider(work, config, "decider%d" % (i + 1), meshes[i], [m for m in meshes if m != meshes[i]])
          for i in range(2)]
    try:
        for d in ds:
            d.start(wait=False)
        for d in ds:
            d.wait()
        net = "203.0.113.0/24"
        before = wait_for(lambda: answer(ds[1].dns, net), 30)
        checks.check(len(before) == 1 and before[0] in (EU, US), "the second decider answers", str(before))
        if len(before) == 1 and before[0] in (EU, US):
            fast = US if before[0] == EU else EU
            samples = [(JOB[fast], "203.0.113.%d" % (10 + i), 20, None) for i in range(20)]
            samples += [(JOB[before[0]], "203.0.113.%d" % (10 + i), 120, None) for i in range(20)]
            status, body, _ = ds[0].http.post("/api/v1/rum/beacons", beacons(samples))
            checks.check(status == 200, "the first decider takes 40 beacons", f"{status} {body}")
            checks.check(wait_for(lambda: answer(ds[1].dns, net) == [fast], 15),
                         f"the second decider's answers for {net} move to {fast}", str(answer(ds[1].dns, net)))
            checks.equal(metrics(ds[1].http).get("gtmesh_rum_peer_samples_total"), 40.0,
                         "the second decider counts the 40 samples its peer shared")
            checks.equal(metrics(ds[1].http).get("gtmesh_rum_beacons_accepted_total"), 0.0,
                         "and took none itself")
    finally:
        for d in ds:
            d.stop()
        if checks.failed:
            for d in ds:
                print(f"--- {d.name} log (tail) ---\n" + open(d.log_path).read()[-3000:], flush=True)
    checks.finish()


def join_beacons(samples, view_id):
    doc = beacons(samples)
    for m in doc["beacons"][0]["measurements"]:
        m["gtmeshViewId"] = view_id
    return doc


def resolve_view(dns, name):
    """dig from 127.0.0.1 (the "resolver"): (status, answers, authority types)."""
    out = dig(dns[0], dns[1], name, "A")
    m = re.search(r"status: ([A-Z]+)", out)
    return (m.group(1) if m else None, section(out, "ANSWER"), [r[3] for r in section(out, "AUTHORITY")])


def join():
    """The resolver join (docs/rum.md): a page view's name resolved through
    a resolver (dig from 127.0.0.1) and the view's beacon (clients in
    198.51.100.0/24) steer that resolver's queries without ECS."""
    checks = Checks("rum_resolver_join")
    work = tempfile.mkdtemp(prefix="gtmesh-rum-join-")
    config = os.path.join(work, "rum.yaml")
    open(config, "w").write(CONFIG.replace("rum:\n  window: 1s\n", "rum:\n  window: 1s\n  join: rum.example.com\n"))
    d = Decider(work, config)
    try:
        d.start()
        dns, http = d.dns, d.http
        before = answer(dns)
        if not checks.check(len(before) == 1 and before[0] in (EU, US), "without beacons the agents' chain answers",
                            str(before)):
            return
        slow, fast = before[0], (US if before[0] == EU else EU)
        # The tag's config names the join; the tag resolves VIEWID.join.
        status, body, _ = http.request("GET", "/api/v1/rum/config?app=shop&key=" + KEY)
        checks.check(status == 200 and json.loads(body).get("join") == "rum.example.com",
                     "the tag's config names the join", f"{status} {body}")
        # 1. The note first, then the beacon.
        view1 = "a1b2c3d4e5f60718"
        got = resolve_view(dns, view1 + ".rum.example.com")
        checks.check(got[0] == "NOERROR" and not got[1] and got[2] == ["SOA"],
                     "a page view's name answers NODATA (SOA in authority)", str(got))
        samples = [(JOB[fast], "198.51.100.%d" % (10 + i), 20 + i % 5, None) for i in range(20)]
        samples += [(JOB[slow], "198.51.100.%d" % (10 + i), 120 + i % 5, None) for i in range(20)]
        status, body, _ = http.post("/api/v1/rum/beacons", join_beacons(samples, view1))
        checks.check(status == 200 and json.loads(body) == {"processed": 40, "failed": 0}, "the view's 40 beacons",
                     f"{status} {body}")
        t0 = time.monotonic()
        moved = wait_for(lambda: answer(dns) == [fast], 10)
        checks.check(moved, "the resolver's queries without ECS move to %s, what its users measured fastest "
                            "(%.1f s, window 1 s)" % (fast, time.monotonic() - t0), str(answer(dns)))
        checks.equal(answer(dns, "203.0.113.0/24"), before, "a query with another network's ECS is not steered by "
                     "the resolver's users")
        ex = subprocess.run([GTMESHCTL, "--decider", d.mesh, "explain", "www.example.com", "A", "--client",
                             "127.0.0.1"], capture_output=True, text=True, timeout=30).stdout
        checks.check("rum: evidence at resolver 127.0.0.0/24" in ex, "explain names the resolver level", ex)
        m = metrics(http)
        checks.check(m.get('gtmesh_rum_join_total{event="noted"}') == 1.0 and
                     m.get('gtmesh_rum_join_total{event="joined"}') == 40.0,
                     "one note, 40 measurements joined", str({k: v for k, v in m.items() if "join" in k}))
        # 2. The beacon first (its note comes later: another decider, a slow
        # resolver): it waits, and is joined at the next window after the note.
        view2 = "0f1e2d3c4b5a6978"
        samples = [(JOB[slow], "198.51.100.%d" % (10 + i), 15, None) for i in range(60)]
        samples += [(JOB[fast], "198.51.100.%d" % (10 + i), 200, None) for i in range(60)]
        status, body, _ = http.post("/api/v1/rum/beacons", join_beacons(samples, view2))
        checks.check(status == 200, "a second view's 120 beacons, before its name is resolved", f"{status} {body}")
        checks.equal(metrics(http).get("gtmesh_rum_join_pending"), 120.0, "they wait for their note")
        held = time.monotonic() + 2.5  # two windows and more: nothing joins them yet
        while time.monotonic() < held:
            if answer(dns) != [fast]:
                break
            time.sleep(0.2)
        checks.equal(answer(dns), [fast], "without the note the resolver's answers stay (%.1f s)" % 2.5)
        got = resolve_view(dns, view2 + ".rum.example.com")
        t0 = time.monotonic()
        back = wait_for(lambda: answer(dns) == [slow], 10)
        checks.check(got[0] == "NOERROR" and back, "once the name is resolved the waiting beacons join: the answers "
                     "move to %s (%.1f s)" % (slow, time.monotonic() - t0), f"{got} {answer(dns)}")
        m = metrics(http)
        checks.check(m.get("gtmesh_rum_join_pending") == 0.0 and m.get('gtmesh_rum_join_total{event="joined"}') == 160.0,
                     "none waits any more, 160 joined", str({k: v for k, v in m.items() if "join" in k}))
        # 3. Names under the join that are no view id: NODATA, not noted.
        for name in ("short.rum.example.com", "a.b1c2d3e4f5a6b7c8.rum.example.com", "rum.example.com",
                     "UPPERCASE0123456.rum.example.com"):
            got = resolve_view(dns, name)
            checks.check(got[0] == "NOERROR" and not got[1], f"{name} answers NODATA", str(got))
        dm = {}
        _, text, _ = http.request("GET", "/metrics")
        for mm in re.finditer(r'^gtmesh_dns_rum_join_queries_total\{result="(\w+)"\} (\S+)$', text or "", re.M):
            dm[mm.group(1)] = float(mm.group(2))
        checks.check(dm.get("noted") == 3.0 and dm.get("invalid") == 2.0,
                     "the responder counts 3 view names noted (the upper-case one is a valid id once "
                     "lowercased) and 2 invalid", str(dm))
    finally:
        d.stop()
        if checks.failed:
            print("--- decider log (tail) ---\n" + open(d.log_path).read()[-4000:], flush=True)
    checks.finish()


def asn():
    """The ASN level (docs/rum.md): with geo.asn_database, two networks of one
    country that no beacon came from are steered by what users of their own
    autonomous system measured. tests/data/test.mmdb places 100.70.0.0/16
    in France; tests/data/test-asn.mmdb splits it between AS64500 (the lower
    /17) and AS64501 (the upper)."""
    checks = Checks("rum_asn_level")
    work = tempfile.mkdtemp(prefix="gtmesh-rum-asn-")
    config = os.path.join(work, "rum.yaml")
    geo = "geo: {database: %s, asn_database: %s}\n" % (os.path.join(SRC, "tests", "data", "test.mmdb"),
                                                       os.path.join(SRC, "tests", "data", "test-asn.mmdb"))
    open(config, "w").write(CONFIG + geo)
    d = Decider(work, config)
    try:
        d.start()
        dns, http = d.dns, d.http
        a_net, b_net = "100.70.3.0/24", "100.70.130.0/24"  # no beacon comes from these two
        before = answer(dns, a_net)
        if not checks.check(len(before) == 1 and before[0] in (EU, US), "without beacons the agents' chain answers",
                            str(before)):
            return
        checks.equal(answer(dns, b_net), before, "both networks of France get the same answer before")
        us_net = "192.0.2.0/24"  # the United States in test.mmdb: no system, country or continent gets beacons
        us_before = answer(dns, us_net)
        x, y = before[0], (US if before[0] == EU else EU)
        # AS64500's users (from 100.70.1.0/24) measure y fastest, AS64501's
        # (from 100.70.200.0/24) x: France as a whole is split evenly.
        samples = [(JOB[y], "100.70.1.%d" % (10 + i), 20 + i % 5, None) for i in range(20)]
        samples += [(JOB[x], "100.70.1.%d" % (10 + i), 120 + i % 5, None) for i in range(20)]
        samples += [(JOB[x], "100.70.200.%d" % (10 + i), 20 + i % 5, None) for i in range(20)]
        samples += [(JOB[y], "100.70.200.%d" % (10 + i), 120 + i % 5, None) for i in range(20)]
        status, body, _ = http.post("/api/v1/rum/beacons", beacons(samples))
        checks.check(status == 200 and json.loads(body) == {"processed": 80, "failed": 0}, "80 beacons taken",
                     f"{status} {body}")
        t0 = time.monotonic()
        moved = wait_for(lambda: answer(dns, a_net) == [y], 10)
        checks.check(moved, f"{a_net} (AS64500, no beacon of its own) moves to {y}, what AS64500's users measured "
                            f"fastest ({time.monotonic() - t0:.1f} s)", str(answer(dns, a_net)))
        checks.equal(answer(dns, b_net), [x], f"{b_net} (AS64501) gets {x}, what AS64501's users measured fastest")
        ex = subprocess.run([GTMESHCTL, "--decider", d.mesh, "explain", "www.example.com", "A", "--ecs", a_net],
                            capture_output=True, text=True, timeout=30).stdout
        checks.check("rum: evidence at asn+country AS64500 FR" in ex, "explain names the autonomous system", ex)
        checks.equal(answer(dns, us_net), us_before, f"{us_net}, in another system and continent, keeps its answer")
    finally:
        d.stop()
        if checks.failed:
            print("--- decider log (tail) ---\n" + open(d.log_path).read()[-4000:], flush=True)
    checks.finish()


def main():
    checks = Checks("rum_end_to_end")
    work = tempfile.mkdtemp(prefix="gtmesh-rum-")
    config = os.path.join(work, "rum.yaml")
    open(config, "w").write(CONFIG)
    d = Decider(work, config)
    try:
        d.start()
        run(checks, d)
    finally:
        d.stop()
        if checks.failed:
            print("--- decider log (tail) ---\n" + open(d.log_path).read()[-4000:], flush=True)
    checks.finish()


def run(checks, d):
    http, dns, mesh = d.http, d.dns, d.mesh
    # 1. the tag and what it measures.
    status, js, headers = http.request("GET", "/rum.js")
    checks.check(status == 200 and "api/v1/rum/beacons" in js and "javascript" in headers.get("Content-Type", ""),
                 "GET /rum.js serves the tag", f"{status} {headers}")
    status, body, headers = http.request("GET", "/api/v1/rum/config?app=shop&key=" + KEY, headers={"Origin": ORIGIN})
    jobs = sorted(m["job"] for m in json.loads(body).get("measure", [])) if status == 200 else []
    checks.check(jobs == ["web/eu", "web/us"] and headers.get("Access-Control-Allow-Origin") == ORIGIN,
                 "the tag's config lists what to measure, CORS for the app's origin", f"{status} {body} {headers}")
    status, _, headers = http.request("OPTIONS", "/api/v1/rum/beacons?app=shop",
                                      headers={"Origin": "https://evil.example",
                                               "Access-Control-Request-Method": "POST"})
    checks.check("Access-Control-Allow-Origin" not in headers, "no CORS for another origin", f"{status} {headers}")

    # 2. the network's answers move to the endpoint its users measured fastest.
    net, other = "203.0.113.0/24", "198.51.100.0/24"
    before, before_other = answer(dns, net), answer(dns, other)
    checks.check(len(before) == 1 and before[0] in (EU, US), "without beacons the agents' chain answers", str(before))
    if not (len(before) == 1 and before[0] in (EU, US)):
        return
    fast = US if before[0] == EU else EU
    slow = before[0]
    samples = [(JOB[fast], "203.0.113.%d" % (10 + i), 20 + i % 5, None) for i in range(20)]
    samples += [(JOB[slow], "203.0.113.%d" % (10 + i), 120 + i % 5, None) for i in range(20)]
    status, body, _ = http.post("/api/v1/rum/beacons", beacons(samples))
    checks.check(status == 200 and json.loads(body) == {"processed": 40, "failed": 0},
                 "40 beacons taken (IngestResult)", f"{status} {body}")
    t0 = time.monotonic()
    moved = wait_for(lambda: answer(dns, net) == [fast], 10)
    checks.check(moved, f"answers for {net} move to the faster endpoint {fast} "
                        f"(in {time.monotonic() - t0:.1f} s, window 1 s)", str(answer(dns, net)))
    checks.equal(answer(dns, other), before_other, f"answers for {other} (no beacons) stay")

    # 3. explain shows the evidence.
    ex = subprocess.run([GTMESHCTL, "--decider", mesh, "explain", "www.example.com", "A", "--ecs", net],
                        capture_output=True, text=True, timeout=30)
    text = ex.stdout
    checks.check("rum: evidence at prefix 203.0.113.0/24" in text, "explain names the key level", text)
    for ep in ("eu", "us"):
        checks.check(re.search(r"rum: endpoint %s: n \d+\.\d, p50 \d+\.\d ms, p90 \d+\.\d ms, availability 100%%, "
                               r"age \d+s" % ep, text) is not None, f"explain shows {ep}'s n, p50, availability, age",
                     text)
    checks.check("picked " + ("eu" if fast == EU else "us") in text, "explain says which it picked", text)

    # 4. the fast one became slow: the answers move back.
    samples = [(JOB[fast], "203.0.113.%d" % (10 + i), 400 + i % 5, None) for i in range(80)]
    samples += [(JOB[slow], "203.0.113.%d" % (10 + i), 60 + i % 5, None) for i in range(80)]
    status, body, _ = http.post("/api/v1/rum/beacons", beacons(samples))
    checks.check(status == 200, "160 more beacons taken", f"{status} {body}")
    checks.check(wait_for(lambda: answer(dns, net) == [slow], 10), f"answers for {net} move back to {slow}",
                 str(answer(dns, net)))

    # 5. NEL: the reporting network is the sender's (127.0.0.0/24, asked
    # without ECS). First its beacons make `fast` the choice...
    samples = [(JOB[fast], None, 20, None) for _ in range(20)] + [(JOB[slow], None, 90, None) for _ in range(20)]
    status, body, _ = http.post("/api/v1/rum/beacons", beacons(samples))
    checks.check(status == 200 and wait_for(lambda: answer(dns) == [fast], 10),
                 f"beacons without an address speak for the sender's network: {fast}", str(answer(dns)))
    # ...then browsers report failures reaching it.
    report = [{"age": 10, "type": "network-error", "url": f"https://{fast}/rum.gif",
               "body": {"elapsed_time": 3000, "phase": "connection", "sampling_fraction": 0.5,
                        "server_ip": fast, "status_code": 0, "type": "tcp.timed_out", "protocol": "http/1.1",
                        "method": "GET", "referrer": ""}}] * 10
    status, body, _ = http.request("POST", "/api/v1/rum/nel?app=shop&key=" + KEY, json.dumps(report).encode(),
                                   {"Content-Type": "application/reports+json"})
    checks.check(status == 200 and json.loads(body).get("processed") == 10, "NEL reports taken", f"{status} {body}")
    checks.check(wait_for(lambda: answer(dns) == [slow], 10),
                 f"NEL failures drop {fast} under the availability threshold: answers move to {slow}", str(answer(dns)))

    # 6. a restart keeps the cells (RocksDB): a third network's RUM choice
    # is answered again without a new beacon.
    third = "192.0.2.0/24"
    base3 = answer(dns, third)
    other3 = US if base3 == [EU] else EU
    samples = [(JOB[other3], "192.0.2.%d" % (10 + i), 15, None) for i in range(20)]
    samples += [(JOB[base3[0] if base3 else EU], "192.0.2.%d" % (10 + i), 150, None) for i in range(20)]
    status, body, _ = http.post("/api/v1/rum/beacons", beacons(samples))
    checks.check(status == 200 and wait_for(lambda: answer(dns, third) == [other3], 10),
                 f"answers for {third} move to {other3}", f"{status} {body} {answer(dns, third)}")
    d.stop()
    d.start()
    http, dns, mesh = d.http, d.dns, d.mesh
    checks.check(wait_for(lambda: answer(dns, third) == [other3], 10),
                 f"after a restart, {third} is still answered {other3} from the stored cells",
                 str(answer(dns, third)))
    checks.check(metrics(http).get("gtmesh_rum_beacons_accepted_total", -1) == 0,
                 "no beacon was taken since the restart")

    # 7. bad input: refused, counted, nothing stored, nothing moves.
    steady = answer(dns, other)
    poison = beacons([(JOB[EU if steady == [US] else US], "198.51.100.7", 1, None)] * 10)
    accepted = metrics(http).get("gtmesh_rum_beacons_accepted_total", -1)
    cases = [
        ("no key", lambda: http.post("/api/v1/rum/beacons", poison, key=None), 401, "no_key"),
        ("a wrong key", lambda: http.post("/api/v1/rum/beacons", poison, key="not-the-key-0123456789"), 403,
         "bad_key"),
        ("a forged appid", lambda: http.post("/api/v1/rum/beacons", beacons([(JOB[EU], "198.51.100.7", 1, None)],
                                                                            app="other")), 403, "unknown_app"),
        ("an oversized body", lambda: http.post("/api/v1/rum/beacons", None, raw=b" " * 70000), 413, "too_large"),
        ("malformed JSON", lambda: http.post("/api/v1/rum/beacons", None, raw=b'{"beacons":[{"appid":'), 400,
         "malformed"),
    ]
    for what, send, want, reason in cases:
        was = refused(http, reason)
        status, body, _ = send()
        checks.check(status == want, f"{what}: {want}", f"{status} {body}")
        checks.check(refused(http, reason) == was + 1, f"{what}: counted as {reason}")
    future = int((time.time() + 3600) * 1e9)
    for what, doc, reason in [
            ("a future timestamp", beacons([(JOB[EU], "198.51.100.7", 1, future)] * 5), "future_timestamp"),
            ("an endpoint no profile has", beacons([("web/mars", "198.51.100.7", 1, None)] * 5), "unknown_job")]:
        was = refused(http, reason)
        status, body, _ = http.post("/api/v1/rum/beacons", doc)
        checks.check(status == 200 and json.loads(body) == {"processed": 0, "failed": 5},
                     f"{what}: each beacon refused (IngestResult.failed)", f"{status} {body}")
        checks.check(refused(http, reason) == was + 5, f"{what}: counted as {reason}")
    checks.equal(metrics(http).get("gtmesh_rum_beacons_accepted_total", -2), accepted, "nothing of them was stored")

    # A flood from one address: 429 once over rate_per_address / burst.
    # Meanwhile a client asks the decider's DNS port one query after another
    # (each waits for its answer): every one must be answered.
    was = refused(http, "rate_limited")
    statuses = []
    one = json.dumps(beacons([("web/mars", "198.51.100.7", 1, None)] * 200)).encode()
    asked = {"sent": 0, "answered": 0}
    flooding = threading.Event()
    flooding.set()

    def ask_dns():
        client = UdpClient(dns[0], dns[1])
        query = make_query("www.example.com")
        while flooding.is_set() and asked["sent"] < 100000:
            asked["sent"] += 1
            if client.ask(query, timeout=1.0) is not None:
                asked["answered"] += 1
        client.close()

    asker = threading.Thread(target=ask_dns)
    asker.start()
    t0 = time.monotonic()
    for _ in range(50):
        statuses.append(http.post("/api/v1/rum/beacons", None, raw=one)[0])
    flood_s = time.monotonic() - t0
    flooding.clear()
    asker.join(10)
    checks.check(429 in statuses, f"a flood of 10,000 beacons in {flood_s:.2f} s gets 429", str(statuses))
    checks.check(asked["sent"] >= 10 and asked["answered"] == asked["sent"],
                 "DNS answered every query asked during the flood (%d of %d, %.0f a second, one at a time)"
                 % (asked["answered"], asked["sent"], asked["sent"] / max(flood_s, 1e-3)), str(asked))
    checks.check(refused(http, "rate_limited") >= was + 1, "the flood is counted as rate_limited")
    status, _, _ = http.request("GET", "/healthz")
    checks.equal(status, 200, "/healthz still served after the flood")
    checks.check(wait_for(lambda: answer(dns, other) == steady, 3), "DNS still answers, unchanged by refused input",
                 str(answer(dns, other)))
    published = metrics(http).get("gtmesh_rum_tables_published_total", 0)
    checks.check(wait_for(lambda: metrics(http).get("gtmesh_rum_tables_published_total", 0) >= published + 2, 10),
                 "two more tables published since")  # a stored refused beacon would steer by now
    checks.equal(answer(dns, other), steady, "after a window, refused input has still moved nothing")


if __name__ == "__main__":
    {"--shared": shared, "--join": join, "--asn": asn}.get(sys.argv[1] if sys.argv[1:] else "", main)()
