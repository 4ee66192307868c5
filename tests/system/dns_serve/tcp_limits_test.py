#!/usr/bin/python3
"""System test: `gtmesh serve` keeps TCP open to everyone while one client
(or many) holds idle connections.

Clients are loopback source addresses in different /24s (127.0.0.1,
127.1.0.1, ...; all of 127.0.0.0/8 is local on Linux). Checks, against the
real binary with raw sockets and `dig +tcp -b SOURCE`:
- 256 idle connections from one client (the whole default table) do not
  keep another client from a prompt TCP answer, and that client holds at
  most its share (16 by default), its newest connections;
- with the table full of idle connections from many clients, a new client
  is served and the connection idle longest is the one closed for it;
- with more than half the table in use, idle connections get the shorter
  timeout;
- out of file descriptors (a low RLIMIT_NOFILE), the server frees the
  connection idle longest for a new one instead of spinning on accept();
- every refusal and eviction is counted, and a bad limit is refused at
  start.
Every wait has a deadline; every loop is bounded.
"""

import os
import resource
import shutil
import socket
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "dns_lib"))
from gtmesh_dns import Checks, GtmeshServer, dig, rdata, status_of, wait_until  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ZONE = os.path.join(HERE, "zone.yaml")


def open_idle(server, source, n):
    """`n` connections from `source` that send nothing."""
    out = []
    for _ in range(n):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.bind((source, 0))
        s.settimeout(5)
        s.connect((server.host, server.port))
        s.setblocking(False)
        out.append(s)
    return out


def closed_by_server(s):
    """True if the server has closed `s` (EOF or reset); does not wait."""
    try:
        return s.recv(1, socket.MSG_PEEK) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True


def decided(server):
    """Connections the server has taken off its accept queue and decided on."""
    c = server.counters()
    return c.get("tcp_accepted", 0) + c.get("tcp_rejected", 0) + c.get("tcp_client_limited", 0)


def wait_decided(server, at_least):
    wait_until(lambda: decided(server) >= at_least, 20, f"the server deciding on {at_least} connections", 0.05)


def tcp_answer(server, source):
    """dig +tcp from `source`: (answers, seconds taken, output)."""
    started = time.monotonic()
    out = dig(server.host, server.port, "+tcp", "+tries=1", "-b", source, "www.example.test", "A")
    return rdata(out), time.monotonic() - started, out


def close_all(sockets):
    for s in sockets:
        s.close()


def one_client_cannot_lock_out_others(t, workdir):
    # 60 s idle timeout: only the limits may close anything while the test runs.
    server = GtmeshServer(workdir, ZONE, name="hog", extra=["--udp-threads", "1", "--tcp-idle-timeout", "60s"]).start()
    hog = []
    try:
        hog = open_idle(server, "127.0.0.1", 256)  # the whole default table
        wait_decided(server, 256)
        answers, took, out = tcp_answer(server, "127.1.0.1")
        t.equal(answers, ["192.0.2.10"], "256 idle connections from 127.0.0.1: 127.1.0.1 still gets its TCP answer")
        t.check(took < 2.0, f"... promptly ({took:.3f} s), not after an idle timeout", out)
        answers, _, out = tcp_answer(server, "127.0.0.1")
        t.equal(answers, ["192.0.2.10"], "the hog itself can still query on a new connection")

        # 256 - 16 of the hog's idle connections are closed, the oldest ones,
        # and one more for its dig (which counts against the same limit).
        try:
            wait_until(lambda: sum(closed_by_server(s) for s in hog) >= 241, 10, "241 hog connections closed")
        except TimeoutError as e:
            t.check(False, "the hog holds at most 16 connections", str(e))
        closed = [closed_by_server(s) for s in hog]
        t.equal(sum(closed), 241, "the hog holds at most 16 connections (a sixteenth of 256): 15 idle + its dig")
        t.check(all(closed[:241]) and not any(closed[241:]), "... its newest ones")
        counters = server.counters()
        t.equal(counters.get("tcp_client_evicted"), 241, "tcp_client_evicted: 240, and 1 for the hog's dig")
        t.equal(counters.get("tcp_rejected"), 0, "nobody refused")
        t.equal(counters.get("tcp_client_limited"), 0, "tcp_client_limited: 0 (the hog's connections were idle)")
    finally:
        close_all(hog)
        code, _ = server.stop()
        server.kill()
    t.equal(code, 0, "the hog server exits cleanly")


def full_table_evicts_the_longest_idle(t, workdir):
    server = GtmeshServer(workdir, ZONE, name="full",
                          extra=["--udp-threads", "1", "--tcp-max-connections", "8",
                                 "--tcp-pressure-idle-timeout", "10s"]).start()
    idle = []
    try:
        for i in range(8):  # 8 clients, 8 different /24s
            idle += open_idle(server, f"127.{10 + i}.0.1", 1)
            wait_decided(server, i + 1)  # in this order
        answers, took, out = tcp_answer(server, "127.30.0.1")
        t.equal(answers, ["192.0.2.10"], "table full of idle connections: a new client is served")
        t.check(took < 2.0, f"... promptly ({took:.3f} s)", out)
        try:
            wait_until(lambda: closed_by_server(idle[0]), 5, "the longest idle connection closed")
        except TimeoutError as e:
            t.check(False, "the longest idle connection made room", str(e))
        t.equal([closed_by_server(s) for s in idle], [True] + [False] * 7,
                "the connection idle longest made room, the others stay")
        counters = server.counters()
        t.equal(counters.get("tcp_evicted"), 1, "tcp_evicted counts it")
        t.equal(counters.get("tcp_rejected"), 0, "nobody refused")
    finally:
        close_all(idle)
        server.stop()
        server.kill()


def pressure_shortens_the_idle_timeout(t, workdir):
    server = GtmeshServer(workdir, ZONE, name="pressure",
                          extra=["--udp-threads", "1", "--tcp-max-connections", "4", "--tcp-idle-timeout", "60s",
                                 "--tcp-pressure-idle-timeout", "200ms"]).start()
    idle = []
    try:
        for i in range(3):  # 3 of 4: more than half
            idle += open_idle(server, f"127.{40 + i}.0.1", 1)
        wait_decided(server, 3)
        try:
            wait_until(lambda: closed_by_server(idle[0]), 10, "an idle connection closed under pressure")
            ok = True
        except TimeoutError:
            ok = False
        t.check(ok, "3 of 4 connections open: the oldest idle one is closed after 200 ms, not 60 s")
        t.equal([closed_by_server(s) for s in idle[1:]], [False, False], "2 of 4 is no pressure: the others stay")
        counters = server.counters()
        t.equal(counters.get("tcp_pressure_closed"), 1, "tcp_pressure_closed counts it")
        t.equal(counters.get("tcp_idle_closed"), 0, "tcp_idle_closed does not")
    finally:
        close_all(idle)
        server.stop()
        server.kill()


def cpu_seconds(pid):
    """User + system CPU time of a process so far."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def out_of_descriptors(t, workdir):
    # The server inherits a soft limit of 40 descriptors (it needs about 8
    # for itself); restored for this process right after the start.
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(40, hard), hard))
    try:
        server = GtmeshServer(workdir, ZONE, name="fds", extra=["--udp-threads", "1", "--tcp-idle-timeout", "60s"])
        server.start()
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    idle = []
    try:
        before = cpu_seconds(server.proc.pid)
        for i in range(20):  # 80 connections from 20 /24s: within every limit but the descriptors
            idle += open_idle(server, f"127.{50 + i}.0.1", 4)
        wait_decided(server, 40)
        answers, took, out = tcp_answer(server, "127.99.0.1")
        t.equal(answers, ["192.0.2.10"], "out of descriptors: a new client is still served")
        t.check(took < 2.0, f"... promptly ({took:.3f} s)", out)
        counters = server.counters()
        t.check(counters.get("tcp_accept_errors", 0) > 0, "tcp_accept_errors counts the failed accept() calls")
        t.check(counters.get("tcp_evicted", 0) > 0, "tcp_evicted counts the connections freed for them")
        burnt = cpu_seconds(server.proc.pid) - before
        t.check(burnt < 0.5, f"accept() does not spin on the error ({burnt:.2f} s of CPU from the flood to here)")
    finally:
        close_all(idle)
        server.stop()
        server.kill()


def bad_limits_are_refused(t, workdir):
    r = subprocess.run([os.environ.get("GTMESH_BIN", "gtmesh"), "serve", "--config", ZONE, "--listen", "127.0.0.1:0",
                        "--tcp-max-connections", "8", "--tcp-max-connections-per-client", "9"],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=30)
    t.equal(r.returncode, 1, "more per client than in all: refused at start")
    t.check("TCP connections per client" in r.stdout, "... with the reason", r.stdout)


def main():
    t = Checks("dns_serve_tcp_limits")
    workdir = tempfile.mkdtemp(prefix="gtmesh-dns-tcp-")
    try:
        for scenario in (one_client_cannot_lock_out_others, full_table_evicts_the_longest_idle,
                         pressure_shortens_the_idle_timeout, out_of_descriptors, bad_limits_are_refused):
            try:
                scenario(t, workdir)
            except (RuntimeError, TimeoutError, OSError, subprocess.SubprocessError) as e:
                t.check(False, f"{scenario.__name__} ran to the end", str(e)[:2000])
    finally:
        if t.failed:
            for name in ("hog", "full", "pressure", "fds"):
                path = os.path.join(workdir, f"{name}.log")
                if os.path.exists(path):
                    with open(path) as f:
                        print(f"--- {path}\n{f.read()[-3000:]}")
        shutil.rmtree(workdir, ignore_errors=True)
    t.finish()


if __name__ == "__main__":
    main()
