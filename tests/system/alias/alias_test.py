#!/usr/bin/python3
"""System test: ALIAS records (docs/dns.md, "ALIAS records") against a real
recursive resolver. A loopback unbound serves the target's addresses from
local-data; a decider (with one agent and `gtmesh backend`s on the
addresses) answers the apex ALIAS with them:

  1. dig gets unbound's addresses at the apex, with a TTL within the
     resolver's bounds, and never a CNAME;
  2. a backend going down withdraws its address (the agents probe each
     resolved address with the ALIAS's monitor); explain says why;
  3. unbound restarted with new local-data moves the answer after the TTL;
  4. unbound stopped: the last good answer stays and the failure counter
     rises (gtmeshctl status --json, and /metrics);
  5. the decider restarted while unbound is down answers the last good
     addresses from its store, not nothing and not something else;
  6. a signed zone's ALIAS answer (gtmesh serve) validates in a validating
     unbound with the zone's trust anchor.
"""

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "dns_lib"))
sys.path.insert(0, os.path.join(HERE, "..", "dnssec"))
from gtmesh_dns import Checks, GtmeshServer, _die_with_parent, dig, free_port, section, status_of  # noqa: E402
import dnssec_lib  # noqa: E402
from cluster_helpers import wait_for  # noqa: E402

SRC = os.environ.get("GTMESH_SOURCE_DIR", os.path.join(HERE, "..", "..", ".."))
GTMESH = os.environ.get("GTMESH_BIN", os.path.join(SRC, "build", "tools", "gtmesh"))
GTMESHCTL = os.path.join(os.path.dirname(GTMESH), "gtmeshctl")
TARGET = "lb.alias.test."
BACKENDS = ["127.0.0.2", "127.0.0.3", "127.0.0.4"]


class Unbound:
    """A loopback unbound answering TARGET from local-data (TTL 2 s)."""

    def __init__(self, workdir):
        self.dir = os.path.join(workdir, "unbound")
        os.makedirs(self.dir, exist_ok=True)
        self.port = free_port()
        self.proc = None

    def start(self, addresses):
        lines = ["server:", "  interface: 127.0.0.1", f"  port: {self.port}", "  do-ip6: no", "  do-daemonize: no",
                 '  username: ""', '  chroot: ""', f'  directory: "{self.dir}"', f'  pidfile: "{self.dir}/unbound.pid"',
                 "  use-syslog: no", '  logfile: ""', "  verbosity: 1", "  num-threads: 1",
                 "  access-control: 127.0.0.0/8 allow", '  local-zone: "alias.test." static']
        lines += [f'  local-data: "{TARGET} 2 IN A {a}"' for a in addresses]
        lines += ["remote-control:", "  control-enable: no"]
        conf = os.path.join(self.dir, "unbound.conf")
        open(conf, "w").write("\n".join(lines) + "\n")
        self.proc = subprocess.Popen(["unbound", "-d", "-c", conf], stdout=open(os.path.join(self.dir, "log"), "a"),
                                     stderr=subprocess.STDOUT, preexec_fn=_die_with_parent)
        out = wait_for(lambda: status_of(dig("127.0.0.1", self.port, TARGET, "A", "+rec", "+time=1", "+tries=1"))
                       == "NOERROR", 20)
        if not out:
            raise RuntimeError("unbound did not start: " + open(os.path.join(self.dir, "log")).read()[-2000:])

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def answers(host, port, qtype="A"):
    """(sorted addresses, TTLs, types) of one query."""
    out = dig(host, port, "alias.example", qtype)
    rows = section(out, "ANSWER")
    return sorted(r[4] for r in rows), [int(r[1]) for r in rows], {r[3] for r in rows}, out


def start_decider(work, config, data, log_name):
    ports = os.path.join(work, log_name + ".ports")
    if os.path.exists(ports):
        os.remove(ports)
    log = open(os.path.join(work, log_name + ".log"), "w")
    proc = subprocess.Popen([GTMESH, "decider", "--config", config, "--data-dir", data, "--listen", "127.0.0.1:0",
                             "--advertise", "d1:1", "--dns", "127.0.0.1:0", "--http", "127.0.0.1:0",
                             "--port-file", ports], stdout=log, stderr=subprocess.STDOUT, preexec_fn=_die_with_parent)
    if not wait_for(lambda: os.path.exists(ports) and os.path.getsize(ports) > 0, 30):
        raise RuntimeError("the decider did not start: " + open(os.path.join(work, log_name + ".log")).read()[-3000:])
    found = dict(line.split() for line in open(ports) if line.strip())
    host, port = found["dns"].rsplit(":", 1)
    return proc, found["mesh"], (host, int(port)), found.get("http")


def stop(proc):
    if proc and proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def alias_status(mesh):
    r = subprocess.run([GTMESHCTL, "--decider", mesh, "status", "--json"], capture_output=True, text=True, timeout=30)
    try:
        doc = json.loads(r.stdout)
        decider = doc.get("decider", doc)
        return {a["name"]: a for a in decider.get("aliases", [])}
    except (ValueError, KeyError, AttributeError):
        return {}


def metric(http, name):
    try:
        text = urllib.request.urlopen("http://" + http + "/metrics", timeout=5).read().decode()
    except OSError:
        return None
    m = re.search(r"^" + re.escape(name) + r"(?:\{[^}]*\})? (\S+)$", text, re.M)
    return float(m.group(1)) if m else None


def decider_part(t, work):
    unbound = Unbound(work)
    web = free_port()
    backends, agent, decider = [], None, None
    try:
        unbound.start(BACKENDS[:2])
        t.check(True, f"unbound on 127.0.0.1:{unbound.port} answers {TARGET} with {BACKENDS[:2]} (TTL 2)")
        down = {}
        for a in BACKENDS:
            down[a] = os.path.join(work, "down-" + a)
            backends.append(subprocess.Popen([GTMESH, "backend", "--listen", f"{a}:{web}", "--down-file", down[a]],
                                             stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT,
                                             preexec_fn=_die_with_parent))
        config = os.path.join(work, "alias.yaml")
        open(config, "w").write(open(os.path.join(HERE, "alias.yaml.in")).read()
                                .replace("@RESOLVER@", f"127.0.0.1:{unbound.port}").replace("@WEB@", str(web)))
        check = subprocess.run([GTMESH, "check-config", config], capture_output=True, text=True, timeout=30)
        t.check(check.returncode == 0, "check-config accepts the ALIAS config", check.stdout + check.stderr)
        data = os.path.join(work, "d1")
        decider, mesh, dns, http = start_decider(work, config, data, "decider")
        agent = subprocess.Popen([GTMESH, "agent", "--config", config, "--dc", "fra", "--decider", mesh],
                                 stdout=open(os.path.join(work, "agent.log"), "w"), stderr=subprocess.STDOUT,
                                 preexec_fn=_die_with_parent)

        # 1. The apex answers unbound's addresses, TTL within bounds, no CNAME.
        got = wait_for(lambda: answers(*dns)[0] == BACKENDS[:2] and answers(*dns), 30)
        addrs, ttls, types, out = got or answers(*dns)
        t.equal(addrs, BACKENDS[:2], "dig @decider alias.example A: unbound's two addresses")
        t.check(ttls and all(1 <= x <= 2 for x in ttls), f"TTL within min_ttl 1 .. the target's 2 ({ttls})", out)
        t.equal(types, {"A"}, "A records at the apex, no CNAME")
        cname = dig(*dns, "alias.example", "CNAME")
        t.check(status_of(cname) == "NOERROR" and not section(cname, "ANSWER"), "a CNAME query at the apex: NODATA")

        # 2. A backend down: its address is withdrawn by the monitor.
        wait_for(lambda: all(a.get("known") for a in alias_status(mesh).values()), 10)
        open(down[BACKENDS[1]], "w").close()
        moved = wait_for(lambda: answers(*dns)[0] == [BACKENDS[0]], 20)
        t.check(bool(moved), f"{BACKENDS[1]}'s backend down: only {BACKENDS[0]} is answered", answers(*dns)[3])
        ex = subprocess.run([GTMESHCTL, "--decider", mesh, "explain", "alias.example", "A"], capture_output=True,
                            text=True, timeout=30).stdout
        t.check("ALIAS target lb.alias.test." in ex and "monitor web down" in ex and BACKENDS[1] in ex,
                "explain names the target, the withdrawn address and its monitor's verdict", ex[-1500:])
        os.remove(down[BACKENDS[1]])
        back = wait_for(lambda: answers(*dns)[0] == BACKENDS[:2], 20)
        t.check(bool(back), "the backend back: both addresses again", answers(*dns)[3])

        # 3. New data in unbound: the answer moves after the TTL.
        unbound.stop()
        unbound.start([BACKENDS[0], BACKENDS[2]])
        started = time.monotonic()
        moved = wait_for(lambda: answers(*dns)[0] == [BACKENDS[0], BACKENDS[2]], 20)
        t.check(bool(moved), f"unbound now says {BACKENDS[0]}, {BACKENDS[2]}: the answer follows "
                             f"({time.monotonic() - started:.1f} s: TTL 2 s, a refresh, the new address probed)",
                answers(*dns)[3])

        # 4. unbound gone: the last good answer stays, the failures are counted.
        unbound.stop()
        before = alias_status(mesh).get(TARGET, {}).get("failures", 0)
        failing = wait_for(lambda: alias_status(mesh).get(TARGET, {}).get("failures", 0) >= before + 2, 20)
        t.check(bool(failing), "the refreshes fail and are counted (status --json aliases[].failures)",
                json.dumps(alias_status(mesh))[:600])
        addrs, ttls, _, out = answers(*dns)
        t.equal(addrs, [BACKENDS[0], BACKENDS[2]], "the last good addresses are still answered")
        t.check(ttls and all(x <= 1 for x in ttls), f"with at most min_ttl while failing ({ttls})", out)
        total = metric(http, "gtmesh_alias_failures_total")
        t.check(total is not None and total >= 2, f"/metrics gtmesh_alias_failures_total rises ({total})")
        st = alias_status(mesh).get(TARGET, {})
        t.check("timeout" in st.get("last_failure", "") or "network" in st.get("last_failure", ""),
                "status names the last failure", st.get("last_failure", ""))

        # 5. Restarted while unbound is down: the store's last good addresses.
        stop(decider)
        decider, mesh, dns, http = start_decider(work, config, data, "decider2")
        restarted = wait_for(lambda: status_of(dig(*dns, "alias.example", "A")) == "NOERROR" and answers(*dns), 20)
        t.check(bool(restarted) and restarted[0] == [BACKENDS[0], BACKENDS[2]],
                "a decider restarted with the resolver down answers the last good addresses from its store",
                (restarted or answers(*dns))[3])
    finally:
        stop(agent)
        stop(decider)
        unbound.stop()
        for b in backends:
            stop(b)


def dnssec_part(t, work):
    """A signed zone's ALIAS answer, validated by a validating unbound."""
    d = os.path.join(work, "signed")
    os.makedirs(d)
    resolver = Unbound(d)
    server = validator = None
    try:
        resolver.start(BACKENDS[:2])
        key = dnssec_lib.keygen(d, "alias.example", "ecdsap256sha256")
        config = os.path.join(d, "signed.yaml")
        open(config, "w").write(
            "datacenters: [{name: fra}]\n"
            f"resolver: {{servers: [\"127.0.0.1:{resolver.port}\"], min_ttl: 1, max_ttl: 60}}\n"
            "zones:\n  - name: alias.example\n"
            f"    dnssec: {{key: {key}}}\n"
            "    soa: {primary: ns1, admin: hostmaster}\n    ns: [ns1]\n    records:\n"
            f"      - {{name: \"@\", type: ALIAS, target: {TARGET}}}\n"
            "      - {name: ns1, type: A, answers: [192.0.2.53]}\n")
        server = GtmeshServer(d, config, extra=["--udp-threads", "1"]).start()
        wait_for(lambda: answers(server.host, server.port)[0] == BACKENDS[:2], 20)
        ds, _ = dnssec_lib.trust_anchor(config, "alias.example")
        validator = dnssec_lib.start_unbound(d, [{"zone": "alias.example.", "ds": ds, "port": server.port}])
        out = wait_for(lambda: (lambda o: o if "ad" in dnssec_lib.flags_of(o) else None)(
            validator.ask("alias.example", "A")), 20)
        out = out or validator.ask("alias.example", "A")
        ok, why = dnssec_lib.validated(out, "answer")
        rows = [r for r in section(out, "ANSWER") if r[3] == "A"]
        t.check(ok and sorted(r[4] for r in rows) == BACKENDS[:2],
                f"a validating unbound (trust anchor from gtmeshctl dnssec ds) validates the signed ALIAS answer: {why}",
                out[-1500:])
        six = validator.ask("alias.example", "AAAA")
        ok6, why6 = dnssec_lib.validated(six, "nodata")
        t.check(ok6, f"and the signed NODATA for AAAA (the target has none): {why6}", six[-1000:])
    finally:
        if validator:
            stop(validator.proc)
        if server:
            server.kill()
        resolver.stop()


def main():
    t = Checks("alias")
    work = tempfile.mkdtemp(prefix="gtmesh-alias-")
    try:
        decider_part(t, work)
        dnssec_part(t, work)
    except Exception as e:  # report, then fail
        t.check(False, f"unexpected error: {e!r}")
    finally:
        if t.failed:
            for root, _, files in os.walk(work):
                for f in files:
                    if f.endswith(".log") or f == "log":
                        path = os.path.join(root, f)
                        print(f"--- {path}\n{open(path, errors='replace').read()[-2500:]}")
        shutil.rmtree(work, ignore_errors=True)
    t.finish()


if __name__ == "__main__":
    main()
