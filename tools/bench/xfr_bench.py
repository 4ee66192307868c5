#!/usr/bin/python3
"""AXFR of one zone out of gtmesh, Knot and NSD in the same run
(docs/benchmarks.md, "Zone transfers"; issue 44).

The same zone of --records A records (host0..hostN-1.big.test, plus SOA
and NS) is served by `gtmesh serve` (its config, `transfer: {view: omit}`),
by knotd and by nsd (an RFC 1035 zone file, each a primary allowing
transfers from 127.0.0.1), all on free loopback ports. `kdig AXFR` asks
each in turn, --rounds times interleaved; for each server the median time
of a whole transfer as kdig reports it (its query to the last message, its
own printing included, the same client for all three), the bytes and messages kdig received, and the
time relative to Knot and NSD. Every transfer must hold every record
(counted), or the bench exits 1. It refuses to print gtmesh alone: without
knotd and nsd it exits 1.

Then one record is changed in each server's zone (serial 2) and each is
asked for IXFR from serial 1: the bytes and records each sends (NSD 4.6
serves no IXFR: it sends the zone).

  tools/bench/xfr_bench.py [--records 100000] [--rounds 5]

GTMESH_BIN picks the binary (default build/tools/gtmesh). Loopback only;
every server is started here and stopped by its process.
"""

import argparse
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(HERE, ".."))
from free_port import free_port  # noqa: E402  (tools/free_port.py: below the ephemeral range)
GTMESH = os.environ.get("GTMESH_BIN", os.path.join(HERE, "..", "..", "build", "tools", "gtmesh"))


def address(i):
    return "10.%d.%d.%d" % (i // 65536, i // 256 % 256, i % 256)


def write_inputs(d, records):
    with open(os.path.join(d, "gtmesh.yaml"), "w") as f:
        f.write("datacenters:\n  - {name: fra}\nzones:\n  - name: big.test\n"
                "    soa: {primary: ns1.big.test., admin: hostmaster.big.test., serial: 1}\n"
                "    ns: [ns1.big.test.]\n    transfer: {view: omit, allow: [127.0.0.1]}\n    records:\n")
        for i in range(records):
            f.write("      - {name: host%d, type: A, ttl: 30, answers: [%s]}\n" % (i, address(i)))
    with open(os.path.join(d, "big.test.zone"), "w") as f:
        f.write("$ORIGIN big.test.\n$TTL 30\n"
                "@ 3600 IN SOA ns1.big.test. hostmaster.big.test. 1 3600 600 604800 60\n"
                "@ 3600 IN NS ns1.big.test.\n")
        for i in range(records):
            f.write("host%d IN A %s\n" % (i, address(i)))


def wait_soa(port, seconds=120):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        out = subprocess.run(["kdig", "@127.0.0.1", "-p", str(port), "+time=1", "+retry=0", "SOA", "big.test"],
                             capture_output=True, text=True, timeout=10).stdout
        if "NOERROR" in out and "SOA" in out.split("ANSWER SECTION")[-1]:
            return True
        time.sleep(0.2)
    return False


def start_gtmesh(d):
    port = free_port()
    proc = subprocess.Popen([GTMESH, "serve", "--config", os.path.join(d, "gtmesh.yaml"), "--listen",
                             "127.0.0.1:%d" % port, "--udp-threads", "1"],
                            stdout=open(os.path.join(d, "gtmesh.log"), "w"), stderr=subprocess.STDOUT)
    return proc, port


def start_knot(d):
    port = free_port()
    k = os.path.join(d, "knot")
    os.makedirs(k)
    shutil.copy(os.path.join(d, "big.test.zone"), k)
    conf = os.path.join(k, "knot.conf")
    with open(conf, "w") as f:
        f.write(f"""server:
    rundir: "{k}"
    listen: 127.0.0.1@{port}
database:
    storage: "{k}"
control:
    listen: "{k}/knot.sock"
log:
  - target: stderr
    any: warning
acl:
  - id: xfr
    address: 127.0.0.1
    action: transfer
template:
  - id: default
    storage: "{k}"
    zonefile-sync: -1
    journal-content: changes       # IXFR out: the differences a zone-file reload makes
    zonefile-load: difference
    semantic-checks: off
zone:
  - domain: big.test
    file: big.test.zone
    acl: xfr
""")
    proc = subprocess.Popen(["knotd", "-c", conf], stdout=open(os.path.join(k, "knot.log"), "w"),
                            stderr=subprocess.STDOUT)
    return proc, port


def start_nsd(d):
    port = free_port()
    n = os.path.join(d, "nsd")
    os.makedirs(n)
    shutil.copy(os.path.join(d, "big.test.zone"), n)
    conf = os.path.join(n, "nsd.conf")
    with open(conf, "w") as f:
        f.write(f"""server:
    ip-address: 127.0.0.1@{port}
    port: {port}
    username: ""
    zonesdir: "{n}"
    database: ""
    zonelistfile: "{n}/zone.list"
    xfrdfile: "{n}/xfrd.state"
    xfrdir: "{n}"
    pidfile: "{n}/nsd.pid"
    logfile: "{n}/nsd.log"
    server-count: 1
    do-ip6: no
remote-control:
    control-enable: no
zone:
    name: big.test
    zonefile: "{n}/big.test.zone"
    provide-xfr: 127.0.0.1 NOKEY
""")
    proc = subprocess.Popen(["nsd", "-d", "-c", conf], stdout=open(os.path.join(n, "nsd.out"), "w"),
                            stderr=subprocess.STDOUT)
    return proc, port


def axfr(port, records):
    """(seconds, bytes, messages) of one whole transfer, the time as kdig
    reports it (from its query to the last message); exits if short."""
    out = subprocess.run(["kdig", "@127.0.0.1", "-p", str(port), "+time=10", "+retry=0", "AXFR", "big.test"],
                         capture_output=True, text=True, timeout=300).stdout
    m = re.search(r"Received (\d+) B \((\d+) messages, (\d+) records\)", out)
    t = re.search(r"\(TCP\) in ([\d.]+) ms", out)
    if not m or not t or int(m.group(3)) != records + 3:  # SOA, NS, the records, SOA again
        sys.exit("xfr_bench: port %d gave a short transfer: %s" % (port, out[-300:]))
    return float(t.group(1)) / 1000, int(m.group(1)), int(m.group(2))


def change_one_record(d, procs):
    """host7 gets another address and the serial becomes 2, in each server's
    copy of the zone; each is told to load it again."""
    conf = os.path.join(d, "gtmesh.yaml")
    text = open(conf).read()
    text = text.replace("serial: 1}", "serial: 2}").replace("{name: host7, type: A, ttl: 30, answers: [%s]}"
                                                              % address(7), "{name: host7, type: A, ttl: 30, "
                                                              "answers: [192.0.2.7]}")
    open(conf, "w").write(text)
    procs["gtmesh"][0].send_signal(signal.SIGHUP)
    for server in ("knot", "nsd"):
        path = os.path.join(d, server, "big.test.zone")
        z = open(path).read()
        z = z.replace("hostmaster.big.test. 1 ", "hostmaster.big.test. 2 ").replace(
            "host7 IN A %s\n" % address(7), "host7 IN A 192.0.2.7\n")
        open(path, "w").write(z)
    subprocess.run(["knotc", "-s", os.path.join(d, "knot", "knot.sock"), "zone-reload", "big.test"],
                   capture_output=True, timeout=60)
    procs["nsd"][0].send_signal(signal.SIGHUP)
    for name, (_, port) in procs.items():
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            out = subprocess.run(["kdig", "@127.0.0.1", "-p", str(port), "+short", "SOA", "big.test"],
                                 capture_output=True, text=True, timeout=10).stdout.split()
            if len(out) >= 3 and out[2] == "2":
                break
            time.sleep(0.2)
        else:
            sys.exit("xfr_bench: %s did not load serial 2" % name)


def ixfr(port):
    """(bytes, records) of an IXFR from serial 1."""
    out = subprocess.run(["kdig", "@127.0.0.1", "-p", str(port), "+time=10", "+retry=0", "IXFR=1", "big.test"],
                         capture_output=True, text=True, timeout=300).stdout
    m = re.search(r"Received (\d+) B \((\d+) messages, (\d+) records\)", out)
    if not m:
        sys.exit("xfr_bench: port %d gave no IXFR: %s" % (port, out[-300:]))
    return int(m.group(1)), int(m.group(3))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--records", type=int, default=100000)
    ap.add_argument("--rounds", type=int, default=5)
    a = ap.parse_args()
    for tool in ("kdig", "knotd", "nsd"):
        if not shutil.which(tool):
            sys.exit("xfr_bench: %s missing (tools/setup.sh installs knot, nsd and knot-dnsutils): the figures "
                     "mean something only beside Knot's and NSD's" % tool)
    if not os.access(GTMESH, os.X_OK):
        sys.exit("xfr_bench: no gtmesh at %s (build first, or set GTMESH_BIN)" % GTMESH)
    d = tempfile.mkdtemp(prefix="gtmesh-xfr-bench-")
    procs = {}
    try:
        write_inputs(d, a.records)
        for name, start in (("gtmesh", start_gtmesh), ("knot", start_knot), ("nsd", start_nsd)):
            procs[name] = start(d)
        for name, (proc, port) in procs.items():
            if not wait_soa(port):
                sys.exit("xfr_bench: %s did not answer the zone's SOA (logs in %s)" % (name, d))
        results = {name: [] for name in procs}
        for _ in range(a.rounds):
            for name, (proc, port) in procs.items():
                results[name].append(axfr(port, a.records))
        med = {name: statistics.median(r[0] for r in rs) for name, rs in results.items()}
        print("AXFR of %d records, median of %d rounds (kdig, loopback)" % (a.records, a.rounds))
        print("%-8s %10s %12s %9s %10s %10s" % ("server", "seconds", "bytes", "messages", "vs knot", "vs nsd"))
        for name, rs in results.items():
            print("%-8s %10.3f %12d %9d %9.2fx %9.2fx" % (name, med[name], rs[-1][1], rs[-1][2],
                                                          med[name] / med["knot"], med[name] / med["nsd"]))
        # IXFR of a one-record change (each server transferred serial 1
        # above, so gtmesh's journal holds it).
        change_one_record(d, procs)
        print("\nIXFR from serial 1 after one record changed (serial 2)")
        print("%-8s %12s %9s" % ("server", "bytes", "records"))
        for name, (proc, port) in procs.items():
            size, records = ixfr(port)
            print("%-8s %12d %9d%s" % (name, size, records, "  (the whole zone: no IXFR out)"
                                       if records > 100 else ""))
    finally:
        for proc, _ in procs.values():
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(20)
                except subprocess.TimeoutExpired:
                    proc.kill()
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()
