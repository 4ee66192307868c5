#!/usr/bin/python3
"""System test: the catalog zone (RFC 9432; docs/transfers.md "The catalog
zone").

`gtmesh serve` of a config with two parts: example.com with `transfer:`,
and `catalog:` (catalog.invalid). Knot (catalog-role: interpret) and BIND
(catalog-zones), started here with their own configs on free loopback
ports, are told only of the catalog zone:

1. gtmesh answers the catalog itself: `version` TXT "2", one PTR per zone
   with transfer: under `zones`, by AXFR to an allowed client;
2. both secondaries pick example.com up from the catalog and answer it as
   gtmesh does;
3. a reload that adds example.org (with transfer:) moves the catalog's
   serial; gtmesh's NOTIFY brings both secondaries to the new catalog, and
   they serve example.org, answering as gtmesh does, without any change to
   their own configs (within 15 s).
"""

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "dns_lib"))
from gtmesh_dns import Checks, GtmeshServer, _die_with_parent, dig, kdig, section  # noqa: E402
from transfers_test import free_port, stop, xfr_records  # noqa: E402

ZONE = """  - name: {name}
    soa: {{primary: ns1.{name}., admin: hostmaster.{name}.}}
    ns: [ns1.{name}.]
    transfer: {{allow: [127.0.0.1], notify: ["127.0.0.1:{knot}", "127.0.0.1:{bind}"]}}
    records:
      - {{name: ns1, type: A, answers: [{ns}]}}
      - {{name: www, type: A, answers: [{www}]}}
"""


def config(zones, knot, bind):
    text = "datacenters:\n  - {name: fra}\nzones:\n"
    for name, ns, www in zones:
        text += ZONE.format(name=name, ns=ns, www=www, knot=knot, bind=bind)
    text += ('catalog:\n  name: catalog.invalid\n'
             '  transfer: {allow: [127.0.0.1], notify: ["127.0.0.1:%d", "127.0.0.1:%d"]}\n' % (knot, bind))
    return text


def start_knot(d, port, primary):
    os.makedirs(d)
    conf = os.path.join(d, "knot.conf")
    member = """    storage: "{d}"
    master: gtmesh
    acl: notify_from_gtmesh
    zonefile-sync: -1
    zonefile-load: none
    journal-content: none
""".format(d=d)
    with open(conf, "w") as f:
        f.write(f"""server:
    rundir: "{d}"
    listen: 127.0.0.1@{port}
database:
    storage: "{d}"
control:
    listen: "{d}/knot.sock"
log:
  - target: stderr
    any: info
remote:
  - id: gtmesh
    address: 127.0.0.1@{primary}
acl:
  - id: notify_from_gtmesh
    address: 127.0.0.1
    action: notify
template:
  - id: default
{member}  - id: member
{member}zone:
  - domain: catalog.invalid
    catalog-role: interpret
    catalog-template: member
""")
    log = os.path.join(d, "knot.log")
    proc = subprocess.Popen(["knotd", "-c", conf], stdout=open(log, "w"), stderr=subprocess.STDOUT,
                            preexec_fn=_die_with_parent)
    return proc, log


def start_bind(d, port, primary):
    os.makedirs(d)
    conf = os.path.join(d, "named.conf")
    with open(conf, "w") as f:
        f.write(f"""options {{
  directory "{d}";
  pid-file "{d}/named.pid";
  listen-on port {port} {{ 127.0.0.1; }};
  listen-on-v6 {{ none; }};
  recursion no;
  dnssec-validation no;
  notify no;
  allow-notify {{ 127.0.0.1; }};
  catalog-zones {{
    zone "catalog.invalid" default-primaries {{ 127.0.0.1 port {primary}; }} zone-directory "{d}" in-memory yes;
  }};
}};
controls {{ }};
zone "catalog.invalid" {{
  type secondary;
  primaries {{ 127.0.0.1 port {primary}; }};
  file "catalog.db";
}};
""")
    check = subprocess.run(["named-checkconf", conf], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if check.returncode != 0:
        raise RuntimeError("named-checkconf: " + check.stdout)
    log = os.path.join(d, "named.log")
    proc = subprocess.Popen(["named", "-g", "-c", conf], stdout=open(log, "w"), stderr=subprocess.STDOUT,
                            preexec_fn=_die_with_parent)
    return proc, log


def a_answers(port, name):
    out = dig("127.0.0.1", port, name, "A", "+norec", "+time=1", "+tries=1")
    if "status: NOERROR" not in out or " aa" not in out.split("flags:")[1].split(";")[0] + " ":
        return None
    return sorted(r[4] for r in section(out, "ANSWER") if r[3] == "A")


def wait_answer(port, name, want, seconds):
    deadline = time.monotonic() + seconds
    t0 = time.monotonic()
    while time.monotonic() < deadline:
        if a_answers(port, name) == want:
            return time.monotonic() - t0
        time.sleep(0.1)
    return None


def main():
    if not (shutil.which("knotd") and shutil.which("named")):
        print("skip: knot and bind9 are needed (tools/setup.sh installs them)")
        return 77
    t = Checks("dns_transfers_catalog")
    work = tempfile.mkdtemp(prefix="gtmesh-catalog-")
    knot_port, bind_port = free_port(), free_port()
    cfg = os.path.join(work, "gtmesh.yaml")
    zones = [("example.com", "192.0.2.53", "192.0.2.10")]
    open(cfg, "w").write(config(zones, knot_port, bind_port))
    server = knot = bind = None
    logs = []
    try:
        server = GtmeshServer(work, cfg, extra=["--udp-threads", "1"]).start()
        port = server.port
        # 1. The catalog as gtmesh serves it.
        out = dig("127.0.0.1", port, "version.catalog.invalid", "TXT", "+norec")
        t.check('"2"' in out and "status: NOERROR" in out, "gtmesh answers version.catalog.invalid TXT \"2\"",
                out[-400:])
        got = xfr_records(kdig("127.0.0.1", port, "AXFR", "catalog.invalid"))
        ptrs = [(r[0], r[3]) for r in got if r[2] == "PTR"]
        t.check(len(ptrs) == 1 and ptrs[0][1] == "example.com." and ptrs[0][0].endswith(".zones.catalog.invalid."),
                "the catalog's AXFR lists example.com under zones", str(got))
        if ptrs:
            out = dig("127.0.0.1", port, ptrs[0][0], "PTR", "+norec")
            t.check("status: NOERROR" in out and "PTR\texample.com." in out.replace(" ", "\t"),
                    "a PTR query for the member's name is answered (PTR records are served)", out[-400:])

        knot, knot_log = start_knot(os.path.join(work, "knot"), knot_port, port)
        bind, bind_log = start_bind(os.path.join(work, "bind"), bind_port, port)
        logs += [knot_log, bind_log]
        # 2. Both pick example.com up from the catalog.
        for who, p in (("Knot", knot_port), ("BIND", bind_port)):
            took = wait_answer(p, "www.example.com", ["192.0.2.10"], 20)
            t.check(took is not None, "%s serves example.com from the catalog (%s)"
                    % (who, "%.1f s" % took if took is not None else "not within 20 s"),
                    dig("127.0.0.1", p, "www.example.com", "A", "+norec")[-600:])

        # 3. A reload adds example.org: both serve it without a change of their own.
        zones.append(("example.org", "198.51.100.53", "198.51.100.10"))
        open(cfg, "w").write(config(zones, knot_port, bind_port))
        server.signal(signal.SIGHUP)
        server.wait_log(r"reloaded .* \(generation 2\)", 0)
        t.equal(a_answers(port, "www.example.org"), ["198.51.100.10"], "gtmesh serves example.org after the reload")
        for who, p in (("Knot", knot_port), ("BIND", bind_port)):
            took = wait_answer(p, "www.example.org", ["198.51.100.10"], 15)
            t.check(took is not None, "%s serves example.org, added by a reload, within 15 s (%s), its config "
                    "unchanged" % (who, "%.1f s" % took if took is not None else "not within 15 s"),
                    str(a_answers(p, "www.example.org")))
    finally:
        for p in (knot, bind):
            if p:
                stop(p)
        if server:
            server.stop()
        if t.failed:
            for path in logs + ([server.log_path] if server else []):
                if os.path.exists(path):
                    print(f"--- {path}\n{open(path).read()[-3000:]}", flush=True)
        shutil.rmtree(work, ignore_errors=True)
    t.finish()


if __name__ == "__main__":
    sys.exit(main())
