#!/usr/bin/python3
"""System test: zone transfers out of `gtmesh serve` (docs/transfers.md).

1. kdig and dig AXFR of configs/examples/transfers.yaml (with
   configs/states/transfers.yaml: iad down) give exactly the zone's records,
   SOA first and last, the dynamic record www as its healthy DCs' addresses.
2. IXFR from the current serial is the SOA alone; from an older one, the
   whole zone.
3. A transfer from 127.0.0.2 (not in allow), and of example.net (no
   transfer:), are REFUSED and counted; a name that is no zone is NOTAUTH.
4. A zone of 3,000 records goes out in several messages, every record once.
5. Knot (knotd), NSD and BIND (named), started here with their own configs on free
   loopback ports, pull example.com and answer every name of it exactly as
   gtmesh does (dig, answer by answer).
6. NOTIFY: with `notify:` naming a Knot, an NSD and a BIND, a reload that
   changes one record moves the serial; each holds the new serial within
   2 s (their own refreshes are an hour away), having taken the change by
   IXFR (three incremental IXFRs counted, no AXFR), and answers every name
   as gtmesh does.
"""

import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "dns_lib"))
from gtmesh_dns import Checks, GtmeshServer, _die_with_parent, dig, kdig, status_of, wait_until  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
sys.path.insert(0, os.path.join(SRC, "tools"))
from free_port import free_port  # noqa: E402

CONFIG = os.path.join(SRC, "configs", "examples", "transfers.yaml")
STATE = os.path.join(SRC, "configs", "states", "transfers.yaml")
SOA = "ns1.example.com. hostmaster.example.com. 1 3600 600 604800 60"

# What the example's transfer holds: (owner, ttl, type, rdata). www is DC
# mode over fra, iad and sin with iad down: fra's and sin's addresses.
EXPECTED = sorted([
    ("example.com.", "3600", "SOA", SOA),
    ("example.com.", "3600", "NS", "ns1.example.com."),
    ("example.com.", "3600", "NS", "ns2.example.com."),
    ("ns1.example.com.", "30", "A", "192.0.2.53"),
    ("ns2.example.com.", "30", "A", "198.51.100.53"),
    ("ns2.example.com.", "30", "AAAA", "2001:db8::53"),
    ("example.com.", "3600", "MX", "10 mail.example.com."),
    ("example.com.", "3600", "MX", "20 mail2.example.com."),
    ("example.com.", "30", "TXT", '"v=spf1 mx -all"'),
    ("mail.example.com.", "30", "A", "192.0.2.25"),
    ("mail2.example.com.", "30", "A", "198.51.100.25"),
    ("docs.example.com.", "30", "CNAME", "www.example.com."),
    ("_sip._tcp.example.com.", "30", "SRV", "10 60 5060 sip.example.com."),
    ("sip.example.com.", "30", "A", "192.0.2.60"),
    ("www.example.com.", "30", "A", "192.0.2.10"),
    ("www.example.com.", "30", "A", "203.0.113.10"),
])


def xfr_records(out):
    """(owner, ttl, type, rdata) of every record line of dig/kdig AXFR output."""
    rows = []
    for line in out.splitlines():
        if not line.strip() or line.startswith(";"):
            continue
        f = line.split()
        rows.append((f[0].lower(), f[1], f[3], " ".join(f[4:])))
    return rows


def answers(host, port, name, qtype):
    """(status, sorted answer records) of a dig query."""
    out = dig(host, port, name, qtype, "+noall", "+answer", "+comments")
    rows = []
    for line in out.splitlines():
        if line.strip() and not line.startswith(";"):
            f = line.split()
            rows.append((f[0].lower(), f[1], f[3], " ".join(f[4:])))
    return status_of(out), sorted(rows)


def start_knot(workdir, primary_port, port=None, name="knot", key=None, zone="example.com", address="127.0.0.1"):
    """knotd on `address` as a secondary of gtmesh at `address` for `zone`
    (NOTIFY accepted from `address`; with `key`, (name, base64 secret),
    transfers and NOTIFYs signed with it); returns (process, port, log path)."""
    d = os.path.join(workdir, name)
    os.makedirs(d)
    port = port or free_port()
    conf = os.path.join(d, "knot.conf")
    keyed = f"\n    key: {key[0]}" if key else ""
    keys = f"key:\n  - id: {key[0]}\n    algorithm: hmac-sha256\n    secret: {key[1]}\n" if key else ""
    with open(conf, "w") as f:
        f.write(keys + f"""server:
    rundir: "{d}"
    listen: {address}@{port}
database:
    storage: "{d}"
control:
    listen: "{d}/knot.sock"
log:
  - target: stderr
    any: info
remote:
  - id: gtmesh
    address: {address}@{primary_port}{keyed}
acl:
  - id: notify_from_gtmesh
    address: {address}
    action: notify{keyed}
template:
  - id: default
    storage: "{d}"
    zonefile-sync: -1
    zonefile-load: none
    journal-content: none
zone:
  - domain: {zone}
    master: gtmesh
    acl: notify_from_gtmesh
""")
    log_path = os.path.join(d, "knot.log")
    proc = subprocess.Popen(["knotd", "-c", conf], stdout=open(log_path, "w"), stderr=subprocess.STDOUT,
                            preexec_fn=_die_with_parent)
    return proc, port, log_path


def start_nsd(workdir, primary_port, key=None, tls=None, port=None, name="nsd", ixfr=False):
    """nsd as a secondary of gtmesh (with `key`, (name, base64 secret), its
    transfers signed with it; with `tls`, (CA file, the name the primary's
    certificate must carry), over TLS: XoT; NSD 4.6 sends no client
    certificate). It asks for AXFR only, or with `ixfr` for IXFR (NSD's
    default, AXFR when that fails); returns (process, port, log path)."""
    d = os.path.join(workdir, name)
    os.makedirs(d)
    port = port or free_port()
    conf = os.path.join(d, "nsd.conf")
    keys = f"key:\n    name: {key[0]}\n    algorithm: hmac-sha256\n    secret: \"{key[1]}\"\n" if key else ""
    key_name = key[0] if key else "NOKEY"
    bundle = f'\n    tls-cert-bundle: "{tls[0]}"' if tls else ""
    if tls:
        keys += f"tls-auth:\n    name: gtmesh\n    auth-domain-name: \"{tls[1]}\"\n"
        key_name += " gtmesh"
    with open(conf, "w") as f:
        f.write(keys + f"""server:
    ip-address: 127.0.0.1@{port}
    port: {port}
    username: ""
    zonesdir: "{d}"
    database: ""
    zonelistfile: "{d}/zone.list"
    xfrdfile: "{d}/xfrd.state"
    xfrdir: "{d}"
    pidfile: "{d}/nsd.pid"
    logfile: "{d}/nsd.log"
    server-count: 1
    verbosity: 2
    do-ip6: no{bundle}
remote-control:
    control-enable: no
zone:
    name: example.com
    zonefile: "{d}/example.com.zone"
    request-xfr: {"" if ixfr else "AXFR "}127.0.0.1@{primary_port} {key_name}
    allow-notify: 127.0.0.1 NOKEY
""")
    check = subprocess.run(["nsd-checkconf", conf], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if check.returncode != 0:
        raise RuntimeError("nsd-checkconf: " + check.stdout)
    log_path = os.path.join(d, "nsd.log")
    proc = subprocess.Popen(["nsd", "-d", "-c", conf], stdout=open(os.path.join(d, "nsd.out"), "w"),
                            stderr=subprocess.STDOUT, preexec_fn=_die_with_parent)
    return proc, port, log_path


def start_bind(workdir, primary_port, key=None, tls=None, port=None, name="bind"):
    """named (BIND 9) as a secondary of gtmesh (with `key`, (name, base64
    secret), its transfers signed with it; with `tls`, (CA file, the name its
    certificate must carry), over TLS: XoT); it asks for IXFR once it holds
    the zone (BIND's default); returns (process, port, log path)."""
    d = os.path.join(workdir, name)
    os.makedirs(d)
    port = port or free_port()
    conf = os.path.join(d, "named.conf")
    keys = f'key "{key[0]}" {{ algorithm hmac-sha256; secret "{key[1]}"; }};\n' if key else ""
    keyed = f' key "{key[0]}"' if key else ""
    if tls:
        keys += f'tls xot {{ ca-file "{tls[0]}"; remote-hostname "{tls[1]}"; }};\n'
        keyed += " tls xot"
    with open(conf, "w") as f:
        f.write(keys + f"""options {{
  directory "{d}";
  pid-file "{d}/named.pid";
  listen-on port {port} {{ 127.0.0.1; }};
  listen-on-v6 {{ none; }};
  recursion no;
  dnssec-validation no;
  notify no;
}};
controls {{ }};
zone "example.com" {{
  type secondary;
  primaries {{ 127.0.0.1 port {primary_port}{keyed}; }};
  file "example.com.db";
  allow-notify {{ 127.0.0.1; }};
}};
""")
    check = subprocess.run(["named-checkconf", conf], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if check.returncode != 0:
        raise RuntimeError("named-checkconf: " + check.stdout)
    log_path = os.path.join(d, "named.log")
    proc = subprocess.Popen(["named", "-g", "-c", conf], stdout=open(log_path, "w"), stderr=subprocess.STDOUT,
                            preexec_fn=_die_with_parent)
    return proc, port, log_path


def compare_secondary(t, name, port, gtmesh, serial=1, dynamic=None):
    """The secondary holds the zone (`serial`), then answers every name as
    gtmesh does; a name in `dynamic` ({(owner, type): the records gtmesh
    transfers for it}) as gtmesh transfers it (its fallback view)."""
    soa = SOA.replace(" 1 3600 ", f" {serial} 3600 ")

    def loaded():
        out = dig("127.0.0.1", port, "example.com", "SOA", "+time=1", "+tries=1")
        return status_of(out) == "NOERROR" and soa in out
    wait_until(loaded, 20, f"{name} to load example.com from gtmesh")
    t.check(True, f"{name} on 127.0.0.1:{port} holds example.com from gtmesh (serial {serial})")
    asked = sorted({(owner, qtype) for owner, _, qtype, _ in EXPECTED})
    for owner, qtype in asked:
        if dynamic and (owner, qtype) in dynamic:
            want = ("NOERROR", sorted(dynamic[(owner, qtype)]))
            how = "as gtmesh transfers it (the fallback view)"
        else:
            want = answers(gtmesh.host, gtmesh.port, owner, qtype)
            how = "as gtmesh answers it"
        got = answers("127.0.0.1", port, owner, qtype)
        t.equal(got, want, f"{name}: {owner} {qtype} {how}")
    for owner, qtype in [("nothere.example.com.", "A"), ("mail.example.com.", "AAAA")]:
        t.equal(answers("127.0.0.1", port, owner, qtype)[0], answers(gtmesh.host, gtmesh.port, owner, qtype)[0],
                f"{name}: {owner} {qtype} has gtmesh's status")


def stop(proc):
    if proc and proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()


def big_zone(path, count):
    with open(path, "w") as f:
        f.write("datacenters:\n  - {name: fra}\nzones:\n  - name: big.test\n"
                "    soa: {primary: ns1.big.test., admin: hostmaster.big.test.}\n    ns: [ns1.big.test.]\n"
                "    transfer: {view: omit, allow: [127.0.0.0/8]}\n    records:\n")
        for i in range(count):
            f.write(f"      - {{name: host{i}, type: A, answers: [10.{i // 65536}.{i // 256 % 256}.{i % 256}]}}\n")


def serial_at(port, zone="example.com"):
    """The SOA serial a secondary on `port` serves for `zone`, or None."""
    out = dig("127.0.0.1", port, zone, "SOA", "+short", "+time=1", "+tries=1").split()
    return out[2] if len(out) >= 3 and out[2].isdigit() else None


def clean_up(t, workdir, processes, servers, logs):
    """Stops the secondaries and kills the gtmesh servers a test started;
    when it failed, prints the servers' and `logs`' tails; removes `workdir`."""
    for p in processes:
        stop(p)
    for s in servers:
        if s:
            s.kill()
    if t.failed:
        for path in [s.log_path for s in servers if s] + logs:
            if path and os.path.exists(path):
                print(f"--- {path}\n{open(path).read()[-3000:]}")
    shutil.rmtree(workdir, ignore_errors=True)


def reload_with_one_change(t, notifier, notify_config, text):
    """Writes `text` with mail's address changed to `notify_config`, reloads
    `notifier` (SIGHUP) and checks it answers the change; returns when."""
    with open(notify_config, "w") as f:
        f.write(text.replace("answers: [192.0.2.25]", "answers: [192.0.2.26]"))
    offset = len(notifier.log_text())
    notifier.signal(signal.SIGHUP)
    notifier.wait_log(r"reloaded", offset)
    t.equal(answers(notifier.host, notifier.port, "mail.example.com.", "A")[1][0][3], "192.0.2.26",
            "gtmesh answers the changed record after the reload")
    return time.monotonic()


def knot_follows_notify(t, workdir, notifier, notify_config, text, knot_port, logs, key=None, what="NOTIFY"):
    """A Knot on `knot_port` (with `key`, its transfers and notify ACL keyed)
    loads serial 1 from `notifier`, then, after `text` with one record
    changed is written to `notify_config` and reloaded, holds serial 2
    within 2 s (its own refresh is an hour away). Returns the Knot process."""
    knot, _, knot_log = start_knot(workdir, notifier.port, knot_port, "knot2", key=key)
    logs.append(knot_log)

    wait_until(lambda: serial_at(knot_port) == "1", 20, "Knot to load serial 1 from the notifier")
    changed_at = reload_with_one_change(t, notifier, notify_config, text)
    try:
        wait_until(lambda: serial_at(knot_port) == "2", 2, "Knot to hold serial 2")
        moved = True
    except Exception:
        moved = False
    t.check(moved, f"{what}: Knot holds serial 2 {time.monotonic() - changed_at:.2f} s after the reload (within 2 s)")
    t.equal(answers("127.0.0.1", knot_port, "mail.example.com.", "A"),
            answers(notifier.host, notifier.port, "mail.example.com.", "A"), "Knot answers the changed record")
    return knot


def secondaries_follow_notify(t, workdir, notifier, notify_config, text, ports, logs, started):
    """Knot, NSD and BIND on `ports` (in that order; each asks for IXFR)
    load serial 1 from `notifier`, whose config `text` notifies all three.
    After `text` with one record changed is written and reloaded, each holds
    serial 2 within 2 s (their own refreshes are an hour away), took the
    change by IXFR from the journal (three transfers after the reload, each
    incremental), and answers every name of the zone as gtmesh does.
    Each process is appended to `started` as soon as it runs (the caller
    stops them, whatever happens here)."""
    knot, _, knot_log = start_knot(workdir, notifier.port, ports[0], "knot2")
    started.append(knot)
    nsd, _, nsd_log = start_nsd(workdir, notifier.port, port=ports[1], name="nsd2", ixfr=True)
    started.append(nsd)
    bind, _, bind_log = start_bind(workdir, notifier.port, port=ports[2], name="bind2")
    started.append(bind)
    logs += [knot_log, nsd_log, os.path.join(workdir, "nsd2", "nsd.out"), bind_log]
    names = ("Knot", "NSD", "BIND")
    for name, port in zip(names, ports):
        wait_until(lambda: serial_at(port) == "1", 20, f"{name} to load serial 1 from the notifier")
    before = notifier.counters()
    changed_at = reload_with_one_change(t, notifier, notify_config, text)
    for name, port in zip(names, ports):
        try:
            wait_until(lambda: serial_at(port) == "2", max(0.05, changed_at + 2 - time.monotonic()),
                       f"{name} to hold serial 2")
            moved = True
        except Exception:
            moved = False
        t.check(moved, f"NOTIFY: {name} holds serial 2 {time.monotonic() - changed_at:.2f} s after the reload "
                       "(within 2 s)")
    after = notifier.counters()  # before this test's own AXFR below
    taken = {k: after[k] - before[k] for k in ("xfr_ixfr_incremental", "xfr_ixfr_full", "xfr_axfr")}
    t.equal(taken, {"xfr_ixfr_incremental": 3, "xfr_ixfr_full": 0, "xfr_axfr": 0},
            "after the reload: three transfers, each an incremental IXFR (each secondary took one)")
    t.check(after["notify_acked"] - before["notify_acked"] >= 3,
            "at least three answers to the reload's NOTIFYs counted", str(after))
    # www is dynamic: with view fail_safe the zone holds its fail_safe
    # answer, not the healthy DCs gtmesh answers with.
    www = [r for r in xfr_records(kdig(notifier.host, notifier.port, "AXFR", "example.com"))
           if r[0] == "www.example.com." and r[2] == "A"]
    t.equal(www, [("www.example.com.", "30", "A", "192.0.2.250")], "the notifier transfers www as its fail_safe")
    for name, port in zip(names, ports):
        compare_secondary(t, name + " after the IXFR", port, notifier, serial=2,
                          dynamic={("www.example.com.", "A"): www})
    knot_text = open(knot_log).read()
    t.check("IXFR, incoming" in knot_text and "AXFR-style IXFR" not in knot_text,
            "Knot's log: an incoming IXFR, no AXFR-style IXFR",
            "\n".join(l for l in knot_text.splitlines() if "XFR" in l)[-600:])


def main():
    t = Checks("dns_transfers")
    workdir = tempfile.mkdtemp(prefix="gtmesh-transfers-")
    server = big = knot = nsd = knot2 = bind = None
    followers = []  # the secondaries of step 6
    logs = []
    try:
        server = GtmeshServer(workdir, CONFIG, state=STATE, extra=["--udp-threads", "1"]).start()
        host, port = server.host, server.port
        before = server.counters()

        # 1. kdig and dig AXFR.
        out = kdig(host, port, "AXFR", "example.com")
        got = xfr_records(out)
        t.check(len(got) >= 2 and got[0][2] == "SOA" and got[-1][2] == "SOA", "kdig AXFR: SOA first and last",
                out)
        t.equal(sorted(got[:-1]), EXPECTED, "kdig AXFR: every record of example.com once, www as fra and sin")
        t.equal(got[-1], got[0], "kdig AXFR: the closing SOA is the opening one")
        out = dig(host, port, "AXFR", "example.com")
        got = xfr_records(out)
        t.equal(sorted(got[:-1]), EXPECTED, "dig AXFR: the same records")
        t.check("Transfer failed" not in out and got[-1][2] == "SOA", "dig AXFR completes", out)

        # 2. IXFR.
        out = kdig(host, port, "IXFR=1", "example.com")
        t.equal(xfr_records(out), [("example.com.", "3600", "SOA", SOA)], "IXFR from the current serial: the SOA alone")
        out = kdig(host, port, "IXFR=0", "example.com")
        got = xfr_records(out)
        t.equal(sorted(got[:-1]), EXPECTED, "IXFR from an older serial: the whole zone")

        # 3. Refusals, counted.
        out = dig(host, port, "-b", "127.0.0.2", "AXFR", "example.com")
        t.check("Transfer failed" in out and "www.example.com" not in out, "dig -b 127.0.0.2 AXFR: refused", out)
        out = kdig(host, port, "-b", "127.0.0.2", "AXFR", "example.com")
        t.check("REFUSED" in out and "www.example.com" not in out, "kdig -b 127.0.0.2 AXFR: REFUSED", out)
        out = kdig(host, port, "AXFR", "example.net")
        t.check("REFUSED" in out and "192.0.2.80" not in out, "example.net (no transfer:): REFUSED", out)
        out = kdig(host, port, "AXFR", "example.org")
        t.check("NOTAUTH" in out, "example.org (no such zone): NOTAUTH", out)
        out = dig(host, port, "www.example.net", "A", "+notcp")
        t.equal(status_of(out), "NOERROR", "ordinary queries still answer")
        after = server.counters()
        delta = {k: after[k] - before[k] for k in after if k.startswith("xfr_")}
        t.equal(delta["xfr_refused"], 3, "three refusals counted (two from 127.0.0.2, example.net)")
        t.equal(delta["xfr_notauth"], 1, "one NOTAUTH counted")
        t.equal(delta["xfr_axfr"], 2, "two AXFRs counted")
        t.equal(delta["xfr_ixfr_current"], 1, "one IXFR up to date counted")
        t.equal(delta["xfr_ixfr_full"], 1, "one IXFR answered in full counted")

        # 4. A zone bigger than one message.
        big_config = os.path.join(workdir, "big.yaml")
        big_zone(big_config, 3000)
        big = GtmeshServer(workdir, big_config, extra=["--udp-threads", "1"], name="big").start()
        out = kdig(big.host, big.port, "AXFR", "big.test")
        got = xfr_records(out)
        m = re.search(r"\((\d+) messages", out)
        t.check(m is not None and int(m.group(1)) > 1, "3,000 records: several messages", out[-300:])
        hosts = sorted(r[0] for r in got if r[2] == "A")
        t.equal(len(hosts), 3000, "3,000 A records")
        t.equal(len(set(hosts)), 3000, "each once")
        t.check(got[0][2] == "SOA" and got[-1][2] == "SOA", "SOA first and last")
        axfr_bytes = int(re.search(r"Received (\d+) B", out).group(1))
        # 4b. IXFR from the journal: one record changed by a reload (serial
        # 1 -> 2) goes out as that change alone (RFC 1995), the view being
        # omit (exact); from a serial the journal does not hold, the zone.
        with open(big_config) as f:
            text = f.read()
        t.check("{name: host7, type: A, answers: [10.0.0.7]}" in text, "the big zone has host7")
        with open(big_config, "w") as f:
            f.write(text.replace("{name: host7, type: A, answers: [10.0.0.7]}",
                                 "{name: host7, type: A, answers: [10.9.9.9]}"))
        offset = len(big.log_text())
        big.signal(signal.SIGHUP)
        big.wait_log(r"reloaded", offset)
        before_ixfr = big.counters()
        out = kdig(big.host, big.port, "IXFR=1", "big.test")
        got = xfr_records(out)

        def soa(n):
            return ("big.test.", "3600", "SOA", "ns1.big.test. hostmaster.big.test. %d 3600 600 604800 60" % n)
        t.equal(got, [soa(2), soa(1), ("host7.big.test.", "30", "A", "10.0.0.7"), soa(2),
                      ("host7.big.test.", "30", "A", "10.9.9.9"), soa(2)],
                "IXFR from serial 1 after one change: SOA 2, SOA 1, the old record, SOA 2, the new one, SOA 2")
        ixfr_bytes = int(re.search(r"Received (\d+) B", out).group(1))
        t.check(ixfr_bytes < 400, "IXFR of one change: %d bytes (the AXFR: %d)" % (ixfr_bytes, axfr_bytes))
        out = kdig(big.host, big.port, "IXFR=0", "big.test")
        t.equal(len([r for r in xfr_records(out) if r[2] == "A"]), 3000,
                "IXFR from a serial the journal does not hold: the whole zone")
        counted = big.counters()
        t.equal((counted["xfr_ixfr_incremental"] - before_ixfr["xfr_ixfr_incremental"],
                 counted["xfr_ixfr_full"] - before_ixfr["xfr_ixfr_full"]), (1, 1),
                "one IXFR counted incremental, one full")
        stop(big.proc)

        # 5. Real secondaries.
        knot, knot_port, knot_log = start_knot(workdir, port)
        logs.append(knot_log)
        compare_secondary(t, "Knot", knot_port, server)
        nsd, nsd_port, nsd_log = start_nsd(workdir, port)
        logs += [nsd_log, os.path.join(workdir, "nsd", "nsd.out")]
        compare_secondary(t, "NSD", nsd_port, server)
        bind, bind_port, bind_log = start_bind(workdir, port)
        logs.append(bind_log)
        compare_secondary(t, "BIND", bind_port, server)
        # 6. NOTIFY on a new serial: Knot, NSD and BIND, told by gtmesh's
        # NOTIFY, each take a one-record change by IXFR within 2 s.
        knot2_port, nsd2_port, bind2_port = free_port(), free_port(), free_port()
        notify_config = os.path.join(workdir, "notify.yaml")
        # view fail_safe: the transfer follows the serial exactly, so the
        # change goes out by IXFR from the journal.
        targets = ", ".join(f'"127.0.0.1:{p}"' for p in (knot2_port, nsd2_port, bind2_port))
        text = open(CONFIG).read().replace('      allow: [127.0.0.1, "::1"]\n',
                                           f'      allow: [127.0.0.1, "::1"]\n      notify: [{targets}]\n')
        text = text.replace("      view: current\n", "      view: fail_safe\n", 1)
        t.check("notify:" in text and "view: fail_safe" in text, "the notify variant of the example")
        with open(notify_config, "w") as f:
            f.write(text)
        notifier = GtmeshServer(workdir, notify_config, state=STATE, extra=["--udp-threads", "1"],
                                name="notifier").start()
        big = notifier  # stopped in finally
        secondaries_follow_notify(t, workdir, notifier, notify_config, text, (knot2_port, nsd2_port, bind2_port),
                                  logs, followers)
        for p in followers:
            stop(p)

        final = server.counters()
        t.check(final["xfr_axfr"] + final["xfr_ixfr_full"] >= after["xfr_axfr"] + after["xfr_ixfr_full"] + 3,
                "the secondaries' transfers were counted", str(final))
        code, _ = server.stop()
        t.equal(code, 0, "gtmesh exits cleanly")
    except Exception as e:  # report, then fail
        t.check(False, f"unexpected error: {e}")
    finally:
        clean_up(t, workdir, (knot, nsd, knot2, bind, *followers), (server, big), logs)
    t.finish()


if __name__ == "__main__":
    main()
