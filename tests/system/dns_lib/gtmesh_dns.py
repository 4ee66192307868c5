"""Shared helpers for the DNS system tests (tests/system/dns_*/).

Starts `gtmesh serve` (and other daemons) on loopback with port 0, waits for
readiness through the port file with a bounded deadline, runs dig/kdig, sends
hand-built packets, and records checks. Every child process gets
PR_SET_PDEATHSIG, so nothing outlives the test even if CTest kills it.
"""

import ctypes
import os
import re
import signal
import socket
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "tools"))
from free_port import free_port  # noqa: E402,F401  (one picker: below the ephemeral range)

_libc = ctypes.CDLL(None, use_errno=True)
_PR_SET_PDEATHSIG = 1


def _die_with_parent():
    _libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


class Checks:
    """Collects pass/fail lines; `finish()` exits non-zero if anything failed."""

    def __init__(self, name):
        self.name = name
        self.failed = []
        self.passed = 0

    def check(self, condition, what, detail=""):
        if condition:
            self.passed += 1
            print(f"ok   - {what}", flush=True)
        else:
            self.failed.append(what)
            print(f"FAIL - {what}" + (f"\n       {detail}" if detail else ""), flush=True)
        return condition

    def equal(self, got, want, what):
        return self.check(got == want, what, f"got {got!r}, want {want!r}")

    def finish(self):
        print(f"{self.name}: {self.passed} passed, {len(self.failed)} failed", flush=True)
        for f in self.failed:
            print(f"  failed: {f}", flush=True)
        sys.exit(1 if self.failed else 0)


def wait_until(predicate, timeout, what, interval=0.02):
    """Polls `predicate` until it returns a truthy value or `timeout` s pass."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise TimeoutError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(interval)


class GtmeshServer:
    """`gtmesh serve` on loopback ports chosen by the kernel."""

    def __init__(self, workdir, config, state=None, listens=("127.0.0.1:0",), extra=(), name="gtmesh"):
        self.binary = os.environ.get("GTMESH_BIN", "gtmesh")
        self.workdir = workdir
        self.config = config
        self.state = state
        self.listens = listens
        self.extra = list(extra)
        self.port_file = os.path.join(workdir, f"{name}.ports")
        self.log_path = os.path.join(workdir, f"{name}.log")
        self.proc = None
        self.addresses = []

    def start(self, timeout=30):
        cmd = [self.binary, "serve", "--config", self.config, "--port-file", self.port_file] + self.extra
        if self.state:
            cmd += ["--state", self.state]
        for l in self.listens:
            cmd += ["--listen", l]
        self.log = open(self.log_path, "w")
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=subprocess.STDOUT, preexec_fn=_die_with_parent)

        def ready():
            if self.proc.poll() is not None:
                raise RuntimeError(f"gtmesh serve exited with {self.proc.returncode}:\n{self.log_text()}")
            return os.path.exists(self.port_file)

        wait_until(ready, timeout, "the port file")
        self.addresses = []
        with open(self.port_file) as f:
            for line in f.read().split():
                m = re.match(r"^\[?([^\]]+)\]?:(\d+)$", line)
                self.addresses.append((m.group(1), int(m.group(2))))
        return self

    @property
    def host(self):
        return self.addresses[0][0]

    @property
    def port(self):
        return self.addresses[0][1]

    def log_text(self):
        with open(self.log_path) as f:
            return f.read()

    def signal(self, sig):
        self.proc.send_signal(sig)

    def wait_log(self, pattern, after=0, timeout=15):
        """Waits for a log line matching `pattern` starting after offset `after`;
        returns (match, end offset)."""
        rx = re.compile(pattern, re.M)

        def found():
            text = self.log_text()
            m = rx.search(text, after)
            return (m, m.end()) if m else None

        return wait_until(found, timeout, f"log line /{pattern}/")

    def counters(self):
        """Asks for the counters (SIGUSR1) and returns them as a dict."""
        offset = len(self.log_text())
        self.signal(signal.SIGUSR1)
        # The whole line: a line still being written would parse short.
        m, _ = self.wait_log(r"^gtmesh serve: counters: (.*)\n", offset)
        return parse_counters(m.group(1))

    def stop(self, timeout=15):
        """SIGTERM; returns (exit code, final counters dict)."""
        if self.proc is None or self.proc.poll() is not None:
            return (self.proc.returncode if self.proc else None), {}
        self.proc.send_signal(signal.SIGTERM)
        try:
            code = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            code = self.proc.wait()
        self.log.close()
        m = re.search(r"^gtmesh serve: final counters: (.*)$", self.log_text(), re.M)
        return code, (parse_counters(m.group(1)) if m else {})

    def kill(self):
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def parse_counters(text):
    return {k: int(v) for k, v in (kv.split("=") for kv in text.split())}


def run(cmd, timeout=30):
    """Runs a command; returns its stdout+stderr text."""
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout, text=True,
                       preexec_fn=_die_with_parent)
    return r.stdout


def dig(host, port, *args):
    return run(["dig", f"@{host}", "-p", str(port), "+time=2", "+tries=2", "+norec"] + list(args))


def kdig(host, port, *args):
    return run(["kdig", f"@{host}", "-p", str(port), "+time=2", "+retry=1", "+norec"] + list(args))


def status_of(out):
    m = re.search(r"status: ([A-Z]+)", out)
    return m.group(1) if m else None


def flags_of(out):
    """dig: ';; flags: qr aa;'; kdig: ';; Flags: qr aa;'."""
    m = re.search(r";; [Ff]lags: ([a-z ]*);", out)
    return set(m.group(1).split()) if m else set()


def section(out, name):
    """Records of a dig/kdig section as lists of fields (owner, ttl, class, type, rdata...)."""
    rows = []
    inside = False
    for line in out.splitlines():
        if re.match(rf"^;; {name} SECTION:", line, re.I):
            inside = True
            continue
        if inside:
            if not line.strip() or line.startswith(";;"):
                break
            rows.append(line.split())
    return rows


def rdata(out, name="ANSWER"):
    """The RDATA texts of a section, in order."""
    return [" ".join(r[4:]) for r in section(out, name)]


def client_subnet(out):
    """'198.51.100.0/24/24' from dig or kdig output, or None."""
    m = re.search(r"CLIENT-SUBNET: (\S+)", out)
    return m.group(1) if m else None


# --- hand-built packets -----------------------------------------------------

def wire_name(name):
    out = b""
    for label in name.rstrip(".").split("."):
        if label:
            out += bytes([len(label)]) + label.encode()
    return out + b"\0"


def make_query(name, qtype=1, qid=0x4242, flags=0x0100, qdcount=1, opt=None, edns_version=0):
    """A query; `opt` is the OPT RDATA (bytes) to add an OPT record, or None."""
    header = struct.pack("!HHHHHH", qid, flags, qdcount, 0, 0, 1 if opt is not None else 0)
    body = wire_name(name) + struct.pack("!HH", qtype, 1)
    if opt is not None:
        body += b"\0" + struct.pack("!HHIH", 41, 1232, edns_version << 16, len(opt)) + opt
    return header + body


def ecs_option(family, source, address_bytes, scope=0):
    data = struct.pack("!HBB", family, source, scope) + address_bytes
    return struct.pack("!HH", 8, len(data)) + data


def response_header(data):
    """(id, flags, qd, an, ns, ar) of a response."""
    return struct.unpack("!HHHHHH", data[:12])


class UdpClient:
    def __init__(self, host, port):
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self.sock = socket.socket(family, socket.SOCK_DGRAM)
        self.to = (host, port)

    def send(self, data):
        self.sock.sendto(data, self.to)

    def receive(self, timeout=2.0):
        self.sock.settimeout(timeout)
        try:
            return self.sock.recv(65535)
        except socket.timeout:
            return None

    def ask(self, data, timeout=2.0):
        self.send(data)
        return self.receive(timeout)

    def close(self):
        self.sock.close()
