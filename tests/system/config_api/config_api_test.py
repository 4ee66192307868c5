#!/usr/bin/env python3
"""The per-object config API and the external-dns webhook (docs/api.md),
against a three-decider cluster with mutual TLS (tools/cluster.sh --tls):

  1. auth: no client certificate and an agent certificate read nothing and
     change nothing; the operator certificate changes, and its name is
     the author in `gtmeshctl configs` with the request's message
  2. a PUT through one decider is committed once, served by every
     responder, and read back from another decider with the same ETag
  3. lost updates: two writers with the same If-Match, at once: exactly one
     wins, the other gets 412 and changes nothing; four writers without
     If-Match on four objects through three deciders: all four land
  4. a change that would make the config invalid is a 422 naming a JSON
     pointer into the request (or into the config), and changes nothing;
     ?dry_run=true reports and changes nothing
  5. gtmeshctl get / apply / delete / export over the mesh
  6. a whole-file push that would undo API changes is refused; the exported
     file (it names its version) goes through; --force goes through
  7. bad requests: not JSON, over 1 MiB, chunked, unknown paths, a flood
     (429, counted in metrics); the decider still answers after all of it
  8. external-dns's webhook protocol, step by step as its provider
     documentation lays it out: negotiation, a full sync, an update, a
     delete, and two clusters publishing one name (one weighted profile,
     an endpoint per set-identifier), served by every responder
"""
import json
import os
import re
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import http.client

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "dns_lib"))
from cluster_helpers import CLUSTER, GTMESH, GTMESHCTL, cluster, query, read_env, wait_for  # noqa: E402

failures = []
WEBHOOK_TYPE = "application/external.dns.webhook+json;version=1"


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    if not ok:
        failures.append(what)
    return ok


class Api:
    """HTTPS to one decider's --http listener, with a client certificate or none."""

    def __init__(self, address, tls_dir, cert=None):
        self.host, port = address.rsplit(":", 1)
        self.port = int(port)
        ctx = ssl.create_default_context(cafile=os.path.join(tls_dir, "ca.pem"))
        ctx.check_hostname = False
        if cert:
            ctx.load_cert_chain(os.path.join(tls_dir, cert + ".pem"), os.path.join(tls_dir, cert + ".key"))
        self.ctx = ctx

    def request(self, method, path, body=None, headers=None, raw=False):
        c = http.client.HTTPSConnection(self.host, self.port, context=self.ctx, timeout=30)
        h = dict(headers or {})
        if body is not None and not isinstance(body, (bytes, str)):
            body = json.dumps(body)
            h.setdefault("Content-Type", "application/json")
        c.request(method, path, body=body, headers=h)
        r = c.getresponse()
        data = r.read()
        c.close()
        if raw:
            return r.status, dict(r.getheaders()), data
        try:
            parsed = json.loads(data) if data and data[:1] in (b"{", b"[") else data.decode()
        except ValueError:
            parsed = data.decode(errors="replace")
        return r.status, dict((k.lower(), v) for k, v in r.getheaders()), parsed


def etag(headers):
    return headers.get("etag", "").strip('"')


def ctl(env, n, *args, timeout=60):
    cmd = env["GTMESHCTL%d" % n].split() + list(args)
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)


def dns_answers(env, name):
    return [query(env["DNS%d" % n], name)[1] for n in (1, 2, 3)]


def metric(text, name, labels=""):
    total = 0.0
    for line in text.splitlines():
        if line.startswith(name) and labels in line:
            total += float(line.rsplit(" ", 1)[1])
    return total


def main():
    if shutil.which("dig") is None:
        print("skip: dig is not installed")
        return 77
    work = tempfile.mkdtemp(prefix="gtmesh-api-")
    try:
        cluster("start", work, "--tls")
        env = read_env(os.path.join(work, "cluster.env"))
        tls = os.path.join(work, "tls")
        op = [Api(env["HTTP%d" % n], tls, "gtmeshctl") for n in (1, 2, 3)]
        agent = Api(env["HTTP1"], tls, "agent-fra")
        anon = Api(env["HTTP1"], tls)
        run_checks(env, work, tls, op, agent, anon)
    finally:
        cluster("stop", work, check=False)
        if not failures:
            shutil.rmtree(work, ignore_errors=True)
        else:
            print("logs kept in " + work)
    print("%d failure(s)" % len(failures))
    return 1 if failures else 0


def run_checks(env, work, tls, op, agent, anon):
    zone = "/api/v1/zones/demo.example/records"
    ready = wait_for(lambda: op[0].request("GET", "/api/v1/zones")[0] == 200, 30)
    check(ready, "the API answers on decider 1")
    # A decider answers 503 until its config is committed (docs/api.md):
    # every one must answer before the writes through decider 2 and 3.
    ready = wait_for(lambda: all(o.request("GET", "/api/v1/zones")[0] == 200 for o in op), 30)
    check(ready, "the API answers on every decider (each has its committed config)")

    # 1. auth
    status, _, body = anon.request("GET", "/api/v1/zones")
    check(status == 403, "no client certificate: GET refused (%s)" % status)
    status, _, body = agent.request("GET", "/api/v1/profiles/api")
    check(status == 403, "an agent certificate reads nothing (a config names backends, may hold probe headers)")
    status, _, body = op[0].request("GET", "/api/v1/profiles/api")
    check(status == 200 and body.get("method") == "priority", "the operator certificate reads a profile")
    status, _, body = agent.request("PUT", zone + "/lb/A", {"answers": ["192.0.2.77"]})
    check(status == 403 and "operator" in body.get("error", ""), "an agent certificate cannot change (%s)" % status)

    # 2. a PUT through decider 2, served everywhere, read back from decider 3
    status, h, _ = op[0].request("GET", "/api/v1/config")
    v0 = int(etag(h))

    def loads(how):
        return [metric(o.request("GET", "/metrics")[2], "gtmesh_config_loads_total", 'how="%s"' % how) for o in op]

    whole_before = loads("whole")
    status, h, body = op[1].request("PUT", zone + "/lb/A?message=add+lb", {"ttl": 5, "answers": ["192.0.2.77"]})
    check(status == 201 and body.get("version") == v0 + 1, "PUT through decider 2 creates version %d (%s %s)" %
          (v0 + 1, status, body))
    check(wait_for(lambda: dns_answers(env, "lb.demo.example") == [["192.0.2.77"]] * 3, 15),
          "every responder serves the new record")
    # A record's PUT changes that record's lines of the running text: every
    # decider reads the new version in proportion, none loads it whole
    # (docs/api.md, "A record's change"; a rewrite of the whole text was
    # loaded whole everywhere).
    check(loads("whole") == whole_before and all(n >= 1 for n in loads("records_changed")),
          "every decider read the record's change in proportion (whole loads %s -> %s, in part %s)" %
          (whole_before, loads("whole"), loads("records_changed")))
    status, h, body = op[2].request("GET", zone + "/lb/A")
    check(status == 200 and etag(h) == str(v0 + 1) and body == {"name": "lb", "type": "A", "ttl": 5,
                                                                  "answers": ["192.0.2.77"]},
          "decider 3 reads it back with ETag %d: %s" % (v0 + 1, body))
    out = ctl(env, 1, "configs").stdout
    # The author as the listener proved it (docs/mesh.md, "Who did it"): the
    # operator certificate's name, vouched for by the decider whose HTTPS
    # listener authenticated it.
    check(re.search(r"^%d \S+ \d+ api\.yaml gtmeshctl,_authenticated_by_decider\d's_HTTPS_listener_\(API\) \d+ api "
                    r"add lb$" % (v0 + 1), out, re.M) is not None,
          "gtmeshctl configs names the operator certificate, the listener that vouched for it, the API and the "
          "message: %s" % out[-300:])

    # A record's PUT through decider 1, which has not made the JSON of this
    # version (its last API read was at v0): the first change after a new
    # version reads the record's lines alone. Every decider then holds the
    # config the JSON path gives, and loaded it in proportion.
    status, h, body = op[0].request("PUT", zone + "/lb2/A", {"answers": ["192.0.2.78"]})
    check(status == 201 and body.get("version") == v0 + 2,
          "a PUT without the version's JSON made creates version %d (%s %s)" % (v0 + 2, status, body))
    check(wait_for(lambda: dns_answers(env, "lb2.demo.example") == [["192.0.2.78"]] * 3, 15),
          "every responder serves that record")
    configs = [o.request("GET", "/api/v1/config") for o in op]
    check(all(c[0] == 200 and etag(c[1]) == str(v0 + 2) for c in configs) and
          configs[0][2] == configs[1][2] == configs[2][2] and
          {"name": "lb2", "type": "A", "answers": ["192.0.2.78"]} in
          [r for z in configs[0][2]["zones"] for r in z.get("records", [])],
          "every decider reads version %d alike, with the record" % (v0 + 2))
    check(loads("whole") == whole_before, "and none loaded it whole (%s -> %s)" % (whole_before, loads("whole")))

    # 3. lost updates
    status, h, _ = op[0].request("GET", zone + "/lb/A")
    base = etag(h)
    results = [None, None]

    def writer(i, address):
        results[i] = op[i].request("PUT", zone + "/lb/A", {"ttl": 5, "answers": [address]},
                                   headers={"If-Match": '"%s"' % base})

    threads = [threading.Thread(target=writer, args=(i, a)) for i, a in enumerate(["192.0.2.81", "192.0.2.82"])]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    codes = sorted(r[0] for r in results)
    check(codes == [200, 412], "two writers with If-Match \"%s\": one wins, one gets 412 (%s)" % (base, codes))
    winner = ["192.0.2.81", "192.0.2.82"][[r[0] for r in results].index(200)] if 200 in codes else None
    # Read at once where the winner wrote (its reply waits for that decider
    # to apply it); another decider converges on the same.
    status, h, body = op[[r[0] for r in results].index(200) if 200 in codes else 0].request("GET", zone + "/lb/A")
    check(body.get("answers") == [winner], "the object is the winner's (%s), not overwritten" % body.get("answers"))
    check(wait_for(lambda: op[2].request("GET", zone + "/lb/A")[2].get("answers") == [winner], 10),
          "decider 3 reads the winner's too")

    threads, results4 = [], {}

    def put4(i):
        results4[i] = op[i % 3].request("PUT", zone + "/many%d/A" % i, {"answers": ["192.0.2.%d" % (90 + i)]})[0]

    for i in range(4):
        threads.append(threading.Thread(target=put4, args=(i,)))
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    check(sorted(results4.values()) == [201] * 4, "four writers without If-Match through three deciders: all "
          "land (%s)" % results4)
    status, _, body = op[0].request("GET", zone)
    names = {r["name"] for r in body} if status == 200 else set()
    check({"many0", "many1", "many2", "many3"} <= names, "all four records are in the config")

    # 4. invalid changes and dry runs
    status, h, _ = op[0].request("GET", "/api/v1/config")
    before = etag(h)
    status, h, body = op[0].request("PUT", "/api/v1/profiles/heavy", {
        "method": "weighted", "endpoints": [{"name": "a", "kind": "external", "target": "192.0.2.1", "weight": "x"}]})
    errs = body.get("errors", []) if isinstance(body, dict) else []
    check(status == 422 and errs and errs[0].get("pointer") == "/endpoints/0/weight" and
          errs[0].get("object") == "profiles/heavy",
          "an invalid profile: 422 pointing at /endpoints/0/weight (%s %s)" % (status, errs))
    status, h, body = op[0].request("DELETE", "/api/v1/profiles/api")
    errs = body.get("errors", []) if isinstance(body, dict) else []
    check(status == 422 and errs and re.match(r"/zones/0/records/\d+/profile", errs[0].get("config_pointer", "")),
          "deleting a profile a record uses: 422 naming the record in the config (%s)" % errs)
    status, h, body = op[0].request("PUT", zone + "/dry/A?dry_run=true", {"answers": ["192.0.2.5"]})
    check(status == 200 and body.get("dry_run") is True and "answer" in body.get("report", ""),
          "dry_run=true reports what would change (%s)" % body)
    status, h, _ = op[0].request("GET", "/api/v1/config")
    check(etag(h) == before, "none of them made a version (%s -> %s)" % (before, etag(h)))
    check(op[0].request("GET", zone + "/dry/A")[0] == 404, "the dry run created nothing")

    # 5. gtmeshctl get / apply / delete / export
    r = ctl(env, 2, "get", "zones/demo.example/records", "lb", "A")
    check(r.returncode == 0 and json.loads(r.stdout).get("answers") == [winner], "gtmeshctl get reads a record")
    apply_file = os.path.join(work, "apply.yaml")
    with open(apply_file, "w") as f:
        f.write("profiles:\n  - name: split\n    method: weighted\n    endpoints:\n"
                "      - {name: a, kind: external, target: 192.0.2.41, weight: 1}\n"
                "zones:\n  - name: demo.example\n    records:\n      - {name: split, type: A, ttl: 5, profile: split}\n")
    status, h, _ = op[0].request("GET", "/api/v1/config")
    v = int(etag(h))
    r = ctl(env, 3, "apply", apply_file, "--message", "split")
    check(r.returncode == 0 and "version %d" % (v + 1) in r.stdout, "gtmeshctl apply: two objects, one version "
          "(%s %s)" % (r.stdout.strip(), r.stderr.strip()))
    check(wait_for(lambda: dns_answers(env, "split.demo.example") == [["192.0.2.41"]] * 3, 15),
          "every responder serves the applied profile")
    with open(apply_file, "w") as f:
        f.write("profiles:\n  - name: split\n    method: weighted\n    endpoints:\n"
                "      - {name: a, kind: external, target: 192.0.2.41, weight: -1}\n")
    r = ctl(env, 3, "apply", apply_file)
    check(r.returncode == 1 and "profiles/split /endpoints/0/weight" in r.stderr,
          "gtmeshctl apply of an invalid object: exit 1 with its pointer (%s)" % r.stderr.strip())
    r = ctl(env, 1, "delete", "zones/demo.example/records", "many3", "A", "--message", "cleanup")
    check(r.returncode == 0 and "deleted as version" in r.stdout, "gtmeshctl delete (%s)" % r.stderr.strip())
    r = ctl(env, 1, "delete", "zones/demo.example/records", "many3", "A")
    check(r.returncode == 1 and "no zones/demo.example/records/many3/A" in r.stderr, "deleting it again: 404, exit 1")
    export_file = os.path.join(work, "export.yaml")
    r = ctl(env, 1, "export")
    status, h, _ = op[0].request("GET", "/api/v1/config")
    check(r.returncode == 0 and r.stdout.startswith("# gtmesh config version %s " % etag(h)),
          "gtmeshctl export names the running version %s" % etag(h))
    with open(export_file, "w") as f:
        f.write(r.stdout)
    chk = subprocess.run([GTMESH, "check-config", export_file], capture_output=True, text=True, timeout=30)
    check(chk.returncode == 0, "the export passes check-config (%s)" % chk.stderr.strip()[:200])

    # 6. whole-file pushes and API changes
    r = ctl(env, 1, "push", os.path.join(work, "cluster.yaml"))
    check(r.returncode == 1 and "changed through the api" in r.stderr and "--force" in r.stderr,
          "pushing the original file over API changes is refused (%s)" % r.stderr.strip()[:200])
    check(dns_answers(env, "lb.demo.example") == [[winner]] * 3, "and the API's record is still served")
    r = ctl(env, 1, "push", export_file, "--message", "gitops")
    check(r.returncode == 0, "pushing the exported file goes through (%s)" % r.stderr.strip()[:200])
    op[0].request("PUT", zone + "/late/A", {"answers": ["192.0.2.99"]})
    r = ctl(env, 1, "push", export_file)
    check(r.returncode == 1, "the same export after another API change is refused")
    r = ctl(env, 1, "push", os.path.join(work, "cluster.yaml"), "--force")
    check(r.returncode == 0, "--force pushes it all the same (%s)" % r.stderr.strip()[:200])
    check(wait_for(lambda: dns_answers(env, "lb.demo.example") == [[]] * 3, 15),
          "after the forced push the API's record is gone everywhere")

    # 7. bad requests
    status, _, body = op[0].request("PUT", zone + "/x/A", "{not json", headers={"Content-Type": "application/json"})
    check(status == 400, "a body that is not JSON: 400 (%s)" % status)
    status, _, _ = op[0].request("PUT", zone + "/x/A", "x" * (1024 * 1024 + 10),
                                 headers={"Content-Type": "application/json"})
    check(status == 413, "a body over 1 MiB: 413 (%s)" % status)
    c = http.client.HTTPSConnection(op[0].host, op[0].port, context=op[0].ctx, timeout=10)
    c.putrequest("PUT", zone + "/x/A")
    c.putheader("Transfer-Encoding", "chunked")
    c.endheaders()
    c.send(b"2\r\n{}\r\n0\r\n\r\n")
    r = c.getresponse()
    check(r.status == 411, "a chunked body: 411 (%s)" % r.status)
    c.close()
    for path in ["/api/v1/things", "/api/v1/profiles/a/b", "/api/v1/zones/nope.org/records/x/A",
                 "/api/v1/zones/%FF", "/api/v1/profiles/%C3%28", "/api/v1/profiles/a%00b"]:
        status, _, body = op[0].request("GET", path)
        check(status in (404,), "GET %s: %s" % (path, status))
    status, _, body = op[0].request("PUT", "/api/v1/profiles/%FF", {"method": "weighted", "endpoints": []})
    check(status == 400, "PUT of a name that is not UTF-8: 400, not a crash (%s)" % status)
    status, _, body = op[0].request("PUT", zone + "/x/A", "[" * 100000 + "]" * 100000,
                                    headers={"Content-Type": "application/json"})
    check(status == 400 and "deeper" in body.get("error", ""), "a body nested 100,000 deep: 400 (%s)" % status)
    status, _, body = op[0].request("PUT", zone + "/x/A", {"answers": ["192.0.2.1"]}, headers={"If-Match": '"\xff"'})
    check(status == 400, "an If-Match that is no version: 400 (%s)" % status)
    check(op[1].request("GET", "/api/v1/zones")[0] == 200 and op[0].request("GET", "/api/v1/zones")[0] == 200,
          "every decider still answers after them")
    signed_only_checks(env, work, op)
    kill_during_put(env, work, op)
    webhook_checks(env, op)
    flood_checks(op)


def signed_only_checks(env, work, op):
    """Who did it (docs/mesh.md): gtmeshctl signs what it changes, so every
    decider records the operator certificate as proven; with the cluster's
    signed-only policy on, what a decider can only vouch for (the HTTP API)
    is refused, and gtmeshctl's signed changes go through."""
    zone = "/api/v1/zones/demo.example/records"
    out = ctl(env, 1, "configs").stdout
    check(re.search(r"^\d+ \S+ \d+ api\.yaml gtmeshctl_\(signed\) \d+ api split$", out, re.M) is not None,
          "gtmeshctl apply was signed: its version names the certificate as proven (%s)" % out[-400:])
    r = ctl(env, 2, "signed-only", "on")
    check(r.returncode == 0 and "signed-only policy is on" in r.stdout,
          "gtmeshctl signed-only on (%s %s)" % (r.stdout.strip(), r.stderr.strip()))
    # Answered once applied on decider 2; the others apply it with the
    # leader's next heartbeat: within 5 s on this machine's slowest days.
    def policy_everywhere(text, present=True):
        return all((text in ctl(env, i, "status").stdout) == present for i in (1, 2, 3))
    check(wait_for(lambda: policy_everywhere("signed-only policy: on, set by gtmeshctl (signed)"), 5),
          "every decider says so in its status")
    status, h, body = op[0].request("PUT", zone + "/vouched/A", {"answers": ["192.0.2.31"]})
    check(status == 403 and "signed-only" in body.get("error", ""),
          "an HTTP API change (vouched for, not signed) is refused: %s %s" % (status, body))
    check(op[1].request("GET", zone + "/vouched/A")[0] == 404, "and nothing was written")
    apply_file = os.path.join(work, "signed.yaml")
    with open(apply_file, "w") as f:
        f.write("zones:\n  - name: demo.example\n    records:\n      - {name: signed, type: A, ttl: 5, answers: "
                "[192.0.2.32]}\n")
    r = ctl(env, 3, "apply", apply_file, "--message", "signed change")
    check(r.returncode == 0, "gtmeshctl apply (signed) goes through (%s)" % r.stderr.strip()[:200])
    check(wait_for(lambda: dns_answers(env, "signed.demo.example") == [["192.0.2.32"]] * 3, 15),
          "and every responder serves it")
    r = ctl(env, 1, "signed-only", "off")
    check(r.returncode == 0, "gtmeshctl signed-only off (%s)" % r.stderr.strip())
    check(wait_for(lambda: policy_everywhere("signed-only policy: on", present=False), 5),
          "no decider says it is on any more")
    status, _, body = op[0].request("PUT", zone + "/vouched/A", {"answers": ["192.0.2.31"]})
    check(status in (200, 201), "with the policy off the HTTP API changes the config again (%s %s)" % (status, body))


def webhook_checks(env, op):
    """8. external-dns's webhook provider protocol: each cluster's external-dns
    is given --webhook-provider-url=https://DECIDER/api/v1/external-dns/CLUSTER."""
    a_url, b_url = "/api/v1/external-dns/a", "/api/v1/external-dns/b"
    accept = {"Accept": WEBHOOK_TYPE}
    status, h, body = op[0].request("GET", a_url, headers=accept)
    check(status == 200 and h.get("content-type") == WEBHOOK_TYPE and "demo.example" in body.get("include", []),
          "negotiation: the media type and the zones as the domain filter (%s %s)" % (status, body))
    status, h, body = op[0].request("GET", a_url + "/records", headers=accept)
    check(status == 200 and body == [], "records: nothing published yet (%s)" % body)

    def post(url, path, payload, n=0):
        return op[n].request("POST", url + path, json.dumps(payload),
                             headers={"Content-Type": WEBHOOK_TYPE, "Accept": WEBHOOK_TYPE})

    ep = {"dnsName": "shop.demo.example", "targets": ["192.0.2.51"], "recordType": "A", "recordTTL": 30,
          "setIdentifier": "cluster-a", "labels": {"owner": "a"},
          "providerSpecific": [{"name": "webhook/weight", "value": "3"}]}
    txt = {"dnsName": "a-shop.demo.example", "targets": ["\"heritage=external-dns,external-dns/owner=a\""],
           "recordType": "TXT", "setIdentifier": "cluster-a", "labels": {}}
    status, _, body = post(a_url, "/adjustendpoints", [ep, txt])
    check(status == 200 and len(body) == 2 and body[0]["dnsName"] == "shop.demo.example" and
          body[0]["providerSpecific"] == ep["providerSpecific"] and "labels" not in body[0],
          "adjustendpoints returns what gtmesh will keep (%s)" % body)
    status, _, body = post(a_url, "/records", {"create": [ep, txt]})
    check(status == 204, "records: create (%s %s)" % (status, body))
    check(wait_for(lambda: dns_answers(env, "shop.demo.example") == [["192.0.2.51"]] * 3, 15),
          "every responder serves cluster a's target")
    status, _, body = op[1].request("GET", a_url + "/records", headers=accept)
    adjusted = post(a_url, "/adjustendpoints", [ep, txt])[2]
    check(status == 200 and sorted(map(json.dumps, body)) == sorted(map(json.dumps, adjusted)),
          "records: a full sync reads back exactly what adjustendpoints said, from another decider (%s)" % body)

    # A second cluster publishes the same name with its own set-identifier
    # (the older capitalised plan.Changes names, as external-dns <= v0.14 sent them).
    ep_b = dict(ep, targets=["198.51.100.51"], setIdentifier="cluster-b", labels={"owner": "b"},
                providerSpecific=[{"name": "webhook/weight", "value": "1"}])
    status, _, _ = post(b_url, "/records", {"Create": [ep_b]}, n=2)
    check(status == 204, "cluster b publishes the same name")
    status, _, prof = op[2].request("GET", "/api/v1/profiles/external-dns.shop.demo.example.A")
    weights = {e["name"]: e.get("weight", 1) for e in prof.get("endpoints", [])} if status == 200 else {}
    check(prof.get("method") == "weighted" and weights == {"cluster-a": 3, "cluster-b": 1},
          "one weighted profile, an endpoint per set-identifier with its weight (%s)" % weights)
    status, _, body = op[2].request("GET", b_url + "/records", headers=accept)
    check(status == 200 and [e["setIdentifier"] for e in body] == ["cluster-b"],
          "each cluster reads back only what it published")
    check(wait_for(lambda: all("198.51.100.51" in a or a == ["192.0.2.51"] for a in dns_answers(env, "shop.demo.example"))
                   and op[0].request("GET", "/api/v1/profiles/external-dns.shop.demo.example.A")[0] == 200
                   and len(op[0].request("GET", "/api/v1/profiles/external-dns.shop.demo.example.A")[2]["endpoints"]) == 2,
                   15), "decider 1 has applied cluster b's version too")
    seen = set()
    for _ in range(40):  # bounded: 40 queries
        seen.update(query(env["DNS1"], "shop.demo.example")[1])
    check(seen == {"192.0.2.51", "198.51.100.51"}, "answers come from both clusters (%s)" % seen)

    # Update cluster a's target, then delete cluster b's.
    ep_new = dict(ep, targets=["192.0.2.52"])
    status, _, _ = post(a_url, "/records", {"updateOld": [ep], "updateNew": [ep_new]})
    check(status == 204, "records: update")
    status, _, _ = post(b_url, "/records", {"delete": [ep_b]}, n=2)
    check(status == 204, "records: delete")
    check(wait_for(lambda: dns_answers(env, "shop.demo.example") == [["192.0.2.52"]] * 3, 15),
          "after the update and the delete every responder serves cluster a's new target only")
    status, _, body = op[0].request("GET", a_url + "/records", headers=accept)
    keys = sorted((e["dnsName"], e["recordType"], e["targets"][0]) for e in body)
    check(keys == [("a-shop.demo.example", "TXT", txt["targets"][0]), ("shop.demo.example", "A", "192.0.2.52")],
          "records lists exactly what is left (%s)" % keys)
    check(op[2].request("GET", b_url + "/records", headers=accept)[2] == [], "cluster b has nothing left")
    out = subprocess.run(env["GTMESHCTL1"].split() + ["configs"], capture_output=True, text=True, timeout=30).stdout
    check(re.search(r"_\(external-dns_cluster_b\),_authenticated_by_\S+ \d+ webhook$", out, re.M) is not None,
          "the history marks the webhook's versions and the cluster: %s" % out[-300:])
    # Outside the domain filter, garbage, and deleting what is not there.
    status, h, _ = op[0].request("GET", "/api/v1/config")
    before = etag(h)
    status, _, body = post(a_url, "/records", {"create": [dict(ep, dnsName="shop.elsewhere.org")]})
    check(status == 422, "a name outside every zone is refused (%s %s)" % (status, body))
    status, _, _ = post(a_url, "/records", "garbage")
    check(status == 400, "a body that is no plan.Changes: 400")
    status, _, _ = post(a_url, "/records", {"delete": [dict(ep, setIdentifier="cluster-z")]})
    check(status == 204, "deleting what is not there succeeds (external-dns would retry forever otherwise)")
    status, _, body = op[0].request("PUT", "/api/v1/zones/demo.example/records/shop/A", {"answers": ["192.0.2.9"]})
    status, _, body = post(a_url, "/records", {"create": [dict(ep, dnsName="www.demo.example")]})
    check(status == 422 and "written by hand" in body.get("error", ""),
          "a name a hand-written record answers is refused (%s)" % body)


def kill_during_put(env, work, op):
    """kill -9 of the Raft leader while a PUT is in flight through a follower:
    a 2xx means the object is there (where it was written, and on every
    decider once the killed one is back); a 503 says the outcome is unknown
    and the object is then either wholly there or not at all."""
    zone = "/api/v1/zones/demo.example/records"
    out = subprocess.run(env["GTMESHCTL1"].split() + ["member", "list"], capture_output=True, text=True,
                         timeout=30).stdout
    m = re.search(r"^(\S+) voter leader", out, re.M)
    meshes = [env["MESH%d" % n] for n in (1, 2, 3)]
    if not check(m is not None and m.group(1) in meshes, "the leader is known (%s)" % out.strip()[:200]):
        return
    leader = meshes.index(m.group(1))
    follower = (leader + 1) % 3
    result = {}

    def put():
        result["r"] = op[follower].request("PUT", zone + "/killed/A", {"answers": ["192.0.2.66"]})

    t = threading.Thread(target=put)
    t.start()
    os.kill(int(open(os.path.join(work, "decider%d.pid" % (leader + 1))).read()), signal.SIGKILL)
    t.join()
    status, _, body = result["r"]
    check(status in (200, 201, 503), "a PUT while the leader is killed: %s %s" % (status, body))
    ok = wait_for(lambda: op[follower].request("GET", zone + "/killed/A")[0] in (200, 404) and
                  op[follower].request("GET", "/api/v1/zones")[0] == 200, 20)
    check(ok, "the follower answers again once a new leader is elected")
    got = op[follower].request("GET", zone + "/killed/A")
    if status in (200, 201):
        check(got[0] == 200 and got[2].get("answers") == ["192.0.2.66"], "acknowledged, so it is there (%s)" % (got,))
    else:
        check(got[0] == 404 or got[2].get("answers") == ["192.0.2.66"],
              "not acknowledged: wholly there or not at all (%s)" % (got,))
    cluster("restart-decider", work, str(leader + 1))
    # Its --http port may be another now: read cluster.env again.
    env.update(read_env(os.path.join(work, "cluster.env")))
    op[leader] = Api(env["HTTP%d" % (leader + 1)], os.path.join(work, "tls"), "gtmeshctl")

    def agrees():
        try:
            return op[leader].request("GET", zone + "/killed/A")[0] == got[0]
        except OSError:
            return False  # still starting
    check(wait_for(agrees, 30), "the restarted decider agrees with the others on it")

    def writes():
        try:
            return op[leader].request("PUT", zone + "/settled/A", {"answers": ["192.0.2.67"]})[0] in (200, 201)
        except OSError:
            return False
    check(wait_for(writes, 30, 0.5), "the restarted decider takes changes again once it has a leader")


def flood_checks(op):
    """7 (end). A flood of changes: rate-limited and counted; the decider still answers."""
    zone = "/api/v1/zones/demo.example/records"
    codes = []
    for i in range(60):  # bounded: 60 requests
        codes.append(op[0].request("PUT", zone + "/flood/A?dry_run=true", {"answers": ["192.0.2.1"]})[0])
    check(429 in codes and 200 in codes, "a flood of changes is rate-limited (%d of 60 got 429)" % codes.count(429))
    status, _, text = op[0].request("GET", "/metrics")
    check(metric(text, "gtmesh_api_rate_limited_total") >= 1 and
          metric(text, "gtmesh_api_requests_total", 'code="422"') >= 2,
          "metrics count the refusals and the invalid changes")
    check(op[0].request("GET", "/api/v1/zones")[0] == 200, "the decider still answers")



if __name__ == "__main__":
    sys.exit(main())
