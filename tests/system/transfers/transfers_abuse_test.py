#!/usr/bin/python3
"""System test: transfers under abuse (issue 44, docs/transfers.md "Limits").

`gtmesh serve` of a zone bigger than the kernel's largest TCP send buffer
(so that a client that never reads really stalls the writer), with a 2 s
TCP idle timeout. Throughout, a client asks the UDP port one query after
another (each waits for its answer): every one must be answered.

1. Slow readers: 8 connections from 127.0.0.1 with a 2 KiB receive buffer
   each ask for an AXFR and never read. At most 4 transfers run at once:
   the others get SERVFAIL (counted `xfr_busy`); the 4 stalled ones are
   closed within the idle timeout + slack (`tcp_write_timeout`,
   `xfr_aborted`), and meanwhile a transfer from a fresh client is
   answered once they are gone.
2. 1,008 transfer connections at once from 63 loopback addresses (16
   each, the per-client limit), each asking for an AXFR with a 2 KiB
   receive buffer and never reading: 4 transfers run and stall, the others
   are answered SERVFAIL (busy); the server never holds more than
   `--tcp-max-connections` (256) of them (the rest are closed: counted
   evictions), the stalled four are closed by the idle timeout, and while
   the test still holds every socket it opened, a new client's AXFR and TCP
   query are answered.
"""

import os
import resource
import socket
import struct
import sys
import tempfile
import threading
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "dns_lib"))
from gtmesh_dns import Checks, GtmeshServer, UdpClient, kdig, make_query  # noqa: E402
from transfers_test import big_zone, xfr_records  # noqa: E402

IDLE_S = 2.0
SLACK_S = 3.0
MAX_CONNECTIONS = 256


def axfr_request(zone, qid=0x5151):
    q = make_query(zone, qtype=252, qid=qid, flags=0)
    return struct.pack("!H", len(q)) + q


def closed_by_peer(s):
    """The server closed (or reset) this connection: whatever it sent
    before (a SERVFAIL) is read past, then the end of the stream tells."""
    try:
        while True:
            if s.recv(65536, socket.MSG_DONTWAIT) == b"":
                return True
    except BlockingIOError:
        return False
    except OSError:
        return True


def main():
    t = Checks("dns_transfers_abuse")
    workdir = tempfile.mkdtemp(prefix="gtmesh-xfr-abuse-")
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < 1300:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 4096), hard))
    # Bigger than the largest send buffer the kernel grows to (plus the
    # reader's window): about 34 bytes a record on the wire.
    wmem_max = int(open("/proc/sys/net/ipv4/tcp_wmem").read().split()[2])
    records = min(400000, max(40000, (wmem_max + (1 << 20)) // 30))
    config = os.path.join(workdir, "big.yaml")
    big_zone(config, records)
    server = GtmeshServer(workdir, config, extra=["--udp-threads", "1", "--tcp-idle-timeout", "%gs" % IDLE_S,
                                                  "--tcp-max-connections", str(MAX_CONNECTIONS)]).start(timeout=120)
    host, port = server.host, server.port
    asked = {"sent": 0, "answered": 0}
    running = threading.Event()
    running.set()

    def ask_udp():
        client = UdpClient(host, port)
        query = make_query("host1.big.test")
        while running.is_set() and asked["sent"] < 200000:
            asked["sent"] += 1
            if client.ask(query, timeout=1.0) is not None:
                asked["answered"] += 1
            time.sleep(0.002)
        client.close()

    asker = threading.Thread(target=ask_udp)
    asker.start()
    held = []
    try:
        before = server.counters()
        # 1. Slow readers.
        slow = []
        for i in range(8):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 2048)
            s.connect((host, port))
            s.sendall(axfr_request("big.test", qid=0x100 + i))
            slow.append(s)
            time.sleep(0.05)  # in order, so that the first four are the ones that run
        t0 = time.monotonic()
        deadline = t0 + IDLE_S + SLACK_S + 10
        c = server.counters()
        while time.monotonic() < deadline and c.get("tcp_write_timeout", 0) - before.get("tcp_write_timeout", 0) < 4:
            time.sleep(0.2)
            c = server.counters()
        waited = time.monotonic() - t0
        t.equal(c.get("xfr_busy", 0) - before.get("xfr_busy", 0), 4,
                "8 slow readers: 4 transfers at once, the other 4 answered SERVFAIL (busy)")
        t.check(c.get("tcp_write_timeout", 0) - before.get("tcp_write_timeout", 0) >= 4 and
                waited <= IDLE_S + SLACK_S,
                "the 4 stalled transfers are closed %.1f s after they began (idle timeout %.0f s + slack %.0f s)"
                % (waited, IDLE_S, SLACK_S), str({k: c.get(k, 0) - before.get(k, 0) for k in
                                                  ("tcp_write_timeout", "xfr_aborted", "xfr_axfr")}))
        t.check(c.get("xfr_aborted", 0) - before.get("xfr_aborted", 0) >= 4, "and counted as aborted transfers",
                str(c.get("xfr_aborted", 0) - before.get("xfr_aborted", 0)))
        out = kdig(host, port, "AXFR", "big.test")
        got = xfr_records(out)
        t.equal(sum(1 for r in got if r[2] == "A"), records, "a fresh client's AXFR then gets all %d records" % records)
        for s in slow:
            s.close()

        # 2. 1,008 transfer connections at once from 63 loopback addresses.
        # The server's open descriptors are sampled meanwhile: every
        # accepted connection is one.
        before = server.counters()
        fd_dir = "/proc/%d/fd" % server.proc.pid
        fds = {"base": len(os.listdir(fd_dir)), "max": 0}
        sampling = threading.Event()
        sampling.set()

        def sample_fds():
            while sampling.is_set():
                try:
                    fds["max"] = max(fds["max"], len(os.listdir(fd_dir)))
                except OSError:
                    pass
                time.sleep(0.005)

        sampler = threading.Thread(target=sample_fds)
        sampler.start()
        opened = 0
        t0 = time.monotonic()
        for x in range(1, 64):
            for i in range(16):
                s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 2048)
                s.bind(("127.0.%d.1" % x, 0))
                try:
                    s.connect((host, port))
                    s.sendall(axfr_request("big.test", qid=x * 16 + i))
                    opened += 1
                except OSError:
                    pass  # closed by the server already: counted below
                held.append(s)
        t.check(opened >= 1000, "1,008 transfer connections opened at once (%d connected and asked)" % opened)
        c = server.counters()
        while time.monotonic() < t0 + IDLE_S + SLACK_S + 10 and \
                c.get("tcp_write_timeout", 0) - before.get("tcp_write_timeout", 0) < 4:
            time.sleep(0.2)
            c = server.counters()
        t.check(c.get("tcp_write_timeout", 0) - before.get("tcp_write_timeout", 0) >= 4 and
                time.monotonic() - t0 <= IDLE_S + SLACK_S + 2,
                "the 4 transfers that ran stalled and were closed by the idle timeout (%.1f s)"
                % (time.monotonic() - t0), str({k: c.get(k, 0) - before.get(k, 0)
                                                for k in ("tcp_write_timeout", "xfr_busy", "xfr_axfr")}))
        t.check(c.get("xfr_busy", 0) - before.get("xfr_busy", 0) >= 500,
                "the others were answered SERVFAIL (busy): %d" % (c.get("xfr_busy", 0) - before.get("xfr_busy", 0)))
        sampling.clear()
        sampler.join(10)
        # Each new one beyond the table closed the one idle longest.
        t.check(fds["max"] - fds["base"] <= MAX_CONNECTIONS + 2,
                "the server never held more than its %d connections (at most %d more descriptors, sampled every "
                "5 ms)" % (MAX_CONNECTIONS, fds["max"] - fds["base"]))
        open_now = sum(1 for s in held if not closed_by_peer(s))
        t.check(open_now <= MAX_CONNECTIONS, "from the test's side, at most %d are still open (%d)"
                % (MAX_CONNECTIONS, open_now))
        c = server.counters()
        evicted = sum(c.get(k, 0) - before.get(k, 0) for k in ("tcp_evicted", "tcp_client_evicted",
                                                                 "tcp_pressure_closed", "tcp_rejected"))
        t.check(evicted >= opened - MAX_CONNECTIONS, "the rest were closed and counted (%d)" % evicted,
                str({k: c.get(k, 0) - before.get(k, 0) for k in ("tcp_evicted", "tcp_client_evicted",
                                                                 "tcp_pressure_closed", "tcp_rejected")}))
        out = kdig(host, port, "AXFR", "big.test")
        t.equal(sum(1 for r in xfr_records(out) if r[2] == "A"), records,
                "with every socket still held by the test, a new client's AXFR gets all %d records" % records)
        out = kdig(host, port, "+tcp", "host7.big.test", "A")
        t.check("status: NOERROR" in out and "10.0.0.7" in out, "and a TCP query is answered", out[-300:])
    finally:
        running.clear()
        asker.join(10)
        for s in held:
            s.close()
        code, final = server.stop()
        if t.failed:
            print("--- gtmesh serve log (tail) ---\n" + server.log_text()[-3000:], flush=True)
    t.check(asked["sent"] >= 50 and asked["answered"] == asked["sent"],
            "UDP answered every query asked throughout (%d of %d)" % (asked["answered"], asked["sent"]), str(asked))
    t.equal(code, 0, "gtmesh serve exits 0 after it all")
    t.finish()


if __name__ == "__main__":
    main()
