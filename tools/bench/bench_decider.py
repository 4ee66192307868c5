"""One real `gtmesh decider` for the RUM benchmarks (rum_http_bench.py,
rum_dns_bench.py): a single voter on loopback ports, no agents."""

import os
import signal
import subprocess
import time


def cpu_seconds(pid):
    """User + system CPU of every thread of `pid`, from /proc."""
    f = open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")


def start(gtmesh, work, config, prefix=()):
    """Starts the decider on `config` in `work` (prefix: e.g. taskset); returns
    (process, {"dns": ..., "http": ..., "mesh": ...}) once its ports are written."""
    ports = os.path.join(work, "ports")
    proc = subprocess.Popen([*prefix, gtmesh, "decider", "--config", config, "--data-dir", os.path.join(work, "d"),
                             "--dns", "127.0.0.1:0", "--http", "127.0.0.1:0", "--listen", "127.0.0.1:0",
                             "--advertise", "bench:1", "--port-file", ports],
                            stdout=open(os.path.join(work, "decider.log"), "w"), stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 30
    while not (os.path.exists(ports) and os.path.getsize(ports) > 0) and time.monotonic() < deadline:
        time.sleep(0.1)
    return proc, dict(line.split() for line in open(ports) if line.strip())


def stop(proc):
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(30)
    except subprocess.TimeoutExpired:
        proc.kill()
