#!/usr/bin/env python3
"""Start a DNS server and time its first answer (tools/bench/scale).

usage: first_answer.py PORT QNAME TIMEOUT_S [SETTLE_S] -- COMMAND...

Execs COMMAND, then sends `QNAME A` to 127.0.0.1:PORT every 5 ms (each
query waits at most 5 ms for its reply) until a NOERROR reply with at least
one answer arrives (to any of the queries sent). Prints "SECONDS RSS_KB HWM_KB
SETTLED_RSS_KB CPU_SECONDS": the time from exec to that reply, the server's
VmRSS and VmHWM at that moment, its VmRSS SETTLE_S seconds later (default 3:
the RSS it serves with once start-up garbage is given back), and the CPU
time (user + system, all threads) it had used when it answered: on a
machine shared with builds, the wall time moves with the load and the CPU
time much less. Then stops the
server (SIGTERM, SIGKILL after 10 s). Exits 1 if the server exits or does
not answer within TIMEOUT_S.
"""
import os
import socket
import struct
import subprocess
import sys
import time


def query(qname, qid):
    q = b"".join(bytes([len(label)]) + label.encode() for label in qname.rstrip(".").split(".")) + b"\0"
    return struct.pack("!HHHHHH", qid, 0x0100, 1, 0, 0, 0) + q + struct.pack("!HH", 1, 1)


def status_kb(pid, key):
    try:
        for line in open("/proc/%d/status" % pid):
            if line.startswith(key + ":"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def cpu_seconds(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


def main():
    sep = sys.argv.index("--")
    port, qname, timeout = int(sys.argv[1]), sys.argv[2], float(sys.argv[3])
    settle = float(sys.argv[4]) if sep > 4 else 3.0
    command = sys.argv[sep + 1:]
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.settimeout(0.005)
    t0 = time.monotonic()
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=open(os.devnull, "w"))
    qid = 0
    try:
        while True:
            if proc.poll() is not None:
                print("server exited with %d before answering" % proc.returncode, file=sys.stderr)
                return 1
            if time.monotonic() - t0 > timeout:
                print("no answer within %.0f s" % timeout, file=sys.stderr)
                return 1
            qid = (qid + 1) & 0xFFFF
            try:
                sock.sendto(query(qname, qid), ("127.0.0.1", port))
                reply = sock.recv(4096)
            except OSError:  # not bound yet (ICMP refused) or no reply within 5 ms
                time.sleep(0.005)
                continue
            if len(reply) >= 12:
                # A reply to any of our queries: one later than 5 ms is read
                # after the next query is sent, and insisting on the newest
                # id would then stay one reply behind for ever.
                _, flags, _, ancount = struct.unpack("!HHHH", reply[:8])
                if flags & 0x800F == 0x8000 and ancount > 0:
                    break
        elapsed = time.monotonic() - t0
        rss, hwm = status_kb(proc.pid, "VmRSS"), status_kb(proc.pid, "VmHWM")
        cpu = cpu_seconds(proc.pid)
        time.sleep(settle)  # not a synchronisation: the RSS after a fixed time is the measurement
        if proc.poll() is not None:
            print("server exited with %d after answering" % proc.returncode, file=sys.stderr)
            return 1
        print("%.3f %d %d %d %.2f" % (elapsed, rss, hwm, status_kb(proc.pid, "VmRSS"), cpu))
        return 0
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


if __name__ == "__main__":
    sys.exit(main())
