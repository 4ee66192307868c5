#!/usr/bin/python3
"""DNS over TLS: server CPU per query of gtmesh beside NSD and BIND, in the
same run (docs/benchmarks.md, "DNS over TLS"; issue 44). Debian 12's Knot
3.2 has no DoT server.

One zone (bench.test, `www` A) served by `gtmesh serve --dot` (one UDP
thread), nsd (tls-port) and named (a `tls` listener), each with the same
certificate from a CA made here, on free loopback ports. dnsperf -m dot
asks each in turn (--rounds times, interleaved; -c clients, each its own TLS
connection kept open, -q outstanding, --seconds each). The figure is the
server's CPU (utime + stime of all its threads, /proc) over the run divided
by the queries dnsperf completed: medians per server, and gtmesh's ratio to
NSD's and BIND's. Each server answers a kdig +tls query correctly first, or
the bench exits 1; without nsd and named it exits 1 (a figure without its
peers in the same run says little here). Servers are pinned to CPU 0,
dnsperf to CPU 1.

  tools/bench/dot_bench.py [--rounds 5] [--seconds 10] [--clients 10]

GTMESH_BIN picks the binary (default build/tools/gtmesh). Loopback only;
every server is started here and stopped by its process.
"""

import argparse
import os
import re
import shutil
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
TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    """utime + stime of the process, its threads and its child processes
    (nsd serves from a forked child), in seconds."""
    stats = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open("/proc/%s/stat" % entry) as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            stats[int(entry)] = (int(fields[1]), int(fields[11]) + int(fields[12]))
    tree, total = {pid}, 0
    for _ in range(4):  # children, grandchildren, ...
        tree |= {p for p, (ppid, _) in stats.items() if ppid in tree}
    for p in tree:
        total += stats.get(p, (0, 0))[1]
    return total / TICKS


def sh(cmd, cwd=None):
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=cwd)
    if r.returncode != 0:
        sys.exit("dot_bench: %s: %s" % (" ".join(cmd), r.stderr.strip()[-400:]))
    return r.stdout


def inputs(d):
    sh(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "2",
        "-subj", "/CN=bench CA", "-keyout", "ca.key", "-out", "ca.pem"], d)
    sh(["openssl", "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-subj",
        "/CN=dns.bench.test", "-keyout", "dot.key", "-out", "dot.csr"], d)
    with open(os.path.join(d, "san.ext"), "w") as f:
        f.write("subjectAltName=DNS:dns.bench.test,IP:127.0.0.1\n")
    sh(["openssl", "x509", "-req", "-in", "dot.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
        "-days", "2", "-extfile", "san.ext", "-out", "dot.pem"], d)
    os.chmod(os.path.join(d, "dot.key"), 0o644)  # named and nsd may drop privileges
    with open(os.path.join(d, "gtmesh.yaml"), "w") as f:
        f.write("datacenters: [{name: a}]\nzones:\n  - name: bench.test\n"
                "    soa: {primary: ns1.bench.test., admin: hostmaster.bench.test., serial: 1}\n"
                "    ns: [ns1.bench.test.]\n    records:\n"
                "      - {name: www, type: A, ttl: 300, answers: [192.0.2.11]}\n"
                "      - {name: ns1, type: A, ttl: 300, answers: [192.0.2.53]}\n")
    with open(os.path.join(d, "bench.test.zone"), "w") as f:
        f.write("$ORIGIN bench.test.\n$TTL 300\n"
                "@ IN SOA ns1.bench.test. hostmaster.bench.test. 1 3600 600 604800 60\n"
                "@ IN NS ns1.bench.test.\nns1 IN A 192.0.2.53\nwww IN A 192.0.2.11\n")
    with open(os.path.join(d, "queries.txt"), "w") as f:
        f.write("www.bench.test A\n")


def start(name, d):
    """Starts one server; returns (process, DoT port)."""
    dot, udp = free_port(), free_port()
    pin = ["taskset", "-c", "0"]
    log = open(os.path.join(d, name + ".log"), "w")
    if name == "gtmesh":
        cmd = [GTMESH, "serve", "--config", os.path.join(d, "gtmesh.yaml"), "--listen", "127.0.0.1:%d" % udp,
               "--udp-threads", "1", "--dot", "127.0.0.1:%d" % dot, "--dot-cert", os.path.join(d, "dot.pem"),
               "--dot-key", os.path.join(d, "dot.key"), "--tcp-max-connections", "1024"]
    elif name == "nsd":
        n = os.path.join(d, "nsd")
        os.makedirs(n, exist_ok=True)
        conf = os.path.join(n, "nsd.conf")
        with open(conf, "w") as f:
            f.write(f"""server:
    ip-address: 127.0.0.1@{udp}
    ip-address: 127.0.0.1@{dot}
    port: {udp}
    tls-port: {dot}
    tls-service-key: "{d}/dot.key"
    tls-service-pem: "{d}/dot.pem"
    username: ""
    zonesdir: "{d}"
    database: ""
    zonelistfile: "{n}/zone.list"
    xfrdfile: "{n}/xfrd.state"
    pidfile: "{n}/nsd.pid"
    server-count: 1
    tcp-count: 1024
    do-ip6: no
remote-control:
    control-enable: no
zone:
    name: bench.test
    zonefile: "{d}/bench.test.zone"
""")
        cmd = ["nsd", "-d", "-c", conf]
    else:
        b = os.path.join(d, "bind")
        os.makedirs(b, exist_ok=True)
        conf = os.path.join(b, "named.conf")
        with open(conf, "w") as f:
            f.write(f"""tls local {{ key-file "{d}/dot.key"; cert-file "{d}/dot.pem"; }};
options {{
  directory "{b}";
  pid-file "{b}/named.pid";
  listen-on port {udp} {{ 127.0.0.1; }};
  listen-on port {dot} tls local {{ 127.0.0.1; }};
  listen-on-v6 {{ none; }};
  recursion no;
  tcp-clients 1024;
}};
controls {{ }};
zone "bench.test" {{ type primary; file "{d}/bench.test.zone"; }};
""")
        cmd = ["named", "-g", "-n", "1", "-c", conf]
    proc = subprocess.Popen(pin + cmd, stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        out = subprocess.run(["kdig", "@127.0.0.1", "-p", str(dot), "+tls-ca=" + os.path.join(d, "ca.pem"),
                              "+tls-hostname=dns.bench.test", "+short", "+time=1", "+retry=0", "www.bench.test", "A"],
                             capture_output=True, text=True).stdout
        if "192.0.2.11" in out:
            return proc, dot
        if proc.poll() is not None:
            break
        time.sleep(0.2)
    proc.kill()
    sys.exit("dot_bench: %s did not answer www.bench.test over DoT (log: %s)" % (name, open(log.name).read()[-600:]))


def measure(proc, port, d, seconds, clients):
    """(queries per second, µs of server CPU per query, lost) of one dnsperf run."""
    before = cpu_seconds(proc.pid)
    out = subprocess.run(["taskset", "-c", "1", "dnsperf", "-m", "dot", "-s", "127.0.0.1", "-p", str(port), "-d",
                          os.path.join(d, "queries.txt"), "-c", str(clients), "-q", "100", "-l", str(seconds),
                          "-t", "2"], capture_output=True, text=True, timeout=seconds + 60).stdout
    used = cpu_seconds(proc.pid) - before
    done = int(re.search(r"Queries completed:\s+(\d+)", out).group(1))
    lost = int(re.search(r"Queries lost:\s+(\d+)", out).group(1))
    if done == 0:
        sys.exit("dot_bench: no query completed:\n" + out[-800:])
    return done / seconds, used / done * 1e6, lost


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--seconds", type=int, default=10)
    ap.add_argument("--clients", type=int, default=10)
    a = ap.parse_args()
    for tool in ("nsd", "named", "dnsperf", "kdig", "taskset", "openssl"):
        if not shutil.which(tool):
            sys.exit("dot_bench: %s is missing (apt-get install nsd bind9 dnsperf knot-dnsutils util-linux openssl)"
                     % tool)
    d = tempfile.mkdtemp(prefix="gtmesh-dot-bench-")
    servers = {}
    try:
        inputs(d)
        for name in ("gtmesh", "nsd", "bind"):
            servers[name] = start(name, d)
        results = {name: [] for name in servers}
        for r in range(a.rounds):
            for name, (proc, port) in servers.items():
                qps, us, lost = measure(proc, port, d, a.seconds, a.clients)
                results[name].append((qps, us, lost))
                print("round %d %-6s %8.0f q/s %6.2f µs CPU/query %d lost" % (r + 1, name, qps, us, lost), flush=True)
        med = {n: (statistics.median(x[0] for x in v), statistics.median(x[1] for x in v), sum(x[2] for x in v))
               for n, v in results.items()}
        print("\nmedians of %d interleaved %d s runs, dnsperf -m dot -c %d -q 100:" % (a.rounds, a.seconds, a.clients))
        print("| server | q/s | µs server CPU / query | vs NSD | vs BIND | lost |\n|---|---:|---:|---:|---:|---:|")
        for n, (qps, us, lost) in med.items():
            print("| %s | %.0f | %.2f | %.2fx | %.2fx | %d |" % (n, qps, us, us / med["nsd"][1], us / med["bind"][1],
                                                             lost))
    finally:
        for proc, _ in servers.values():
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()
