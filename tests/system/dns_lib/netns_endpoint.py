"""An HTTP(S) endpoint in a network namespace the test creates (a real
server at its own address, reached from the host through a veth pair), for
the system tests whose browser measures endpoints (tests/system/rum).

    ep = NetnsEndpoint("eu")              # creates the namespace, starts the server
    ep = NetnsEndpoint("eu", ca=(CA_PEM, CA_KEY))  # HTTPS, a certificate for its address signed by that CA
    ep.url                                # http://10.213.N.2:PORT/rum.gif
    ep.set(delay=0.15)                    # later answers 150 ms late
    ep.set(failing=True)                  # read each request, close without an answer
    ep.hits()                             # requests seen so far
    ep.stop()                             # stops the server, deletes the namespace

Each endpoint gets its own /30 from 10.213.0.0/16 (the host side .1, the
namespace .2), picked from the test's process id and a counter, and a
namespace named gtmesh-ep-PID-N; traffic goes only there. Needs root
(`ip netns`); callers skip otherwise. The server is Python's http.server
run inside the namespace with `ip netns exec`; its delay and failure mode
are read from a control file at each request, and each request is counted
in a hits file, so the test changes them without signalling it.
"""

import itertools
import json
import os
import subprocess
import sys
import tempfile
import time

_counter = itertools.count()

SERVER = r'''
import http.server, json, os, socket, ssl, sys, time
control, hits, cert, key, host = sys.argv[1:6]
PIXEL = (b"GIF89a\x01\x00\x01\x00\x80\x00\x00\x00\x00\x00\xff\xff\xff!\xf9\x04\x01\x00\x00\x00\x00,"
         b"\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x02D\x01\x00;")
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_GET(self):
        c = json.load(open(control))
        with open(hits, "a") as f:
            f.write(self.path + "\n")
        if c.get("failing"):
            self.close_connection = True
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            return
        time.sleep(c.get("delay", 0))
        self.send_response(200)
        self.send_header("Content-Type", "image/gif")
        self.send_header("Content-Length", str(len(PIXEL)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("Access-Control-Allow-Origin", "*")
        self.send_header("Timing-Allow-Origin", "*")
        for k, v in c.get("headers", {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(PIXEL)
    def log_message(self, *a):
        pass
s = http.server.ThreadingHTTPServer((host, 0), H)
if cert != "-":
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    s.socket = ctx.wrap_socket(s.socket, server_side=True)
print(s.server_address[1], flush=True)
s.serve_forever()
'''


def available():
    """Whether this process may create namespaces."""
    return os.geteuid() == 0 and subprocess.run(["ip", "netns", "list"], capture_output=True).returncode == 0


def issue_certificate(directory, name, san, ca):
    """A server certificate for `san` ("IP:192.0.2.1", "DNS:example.com")
    signed by `ca` (certificate and key PEM paths): (cert, key) paths in
    `directory`."""
    key, csr = os.path.join(directory, name + ".key"), os.path.join(directory, name + ".csr")
    cert, ext = os.path.join(directory, name + ".pem"), os.path.join(directory, name + ".ext")
    run = lambda argv: subprocess.run(argv, check=True, capture_output=True, timeout=30)
    run(["openssl", "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", key,
         "-out", csr, "-subj", "/CN=" + name])
    with open(ext, "w") as f:
        f.write("subjectAltName=%s\nextendedKeyUsage=serverAuth\nbasicConstraints=critical,CA:FALSE\n" % san)
    run(["openssl", "x509", "-req", "-in", csr, "-CA", ca[0], "-CAkey", ca[1], "-CAcreateserial", "-out", cert,
         "-days", "2", "-extfile", ext])
    return cert, key


def _die_with_parent():
    import ctypes
    ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, 9)  # PR_SET_PDEATHSIG, SIGKILL


def _remove_stale():
    """Namespaces an earlier run of these tests left (its process was killed):
    named gtmesh-ep-PID-N, PID no longer running."""
    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    for line in listed.splitlines():
        name = line.split()[0] if line.split() else ""
        parts = name.split("-")
        if name.startswith("gtmesh-ep-") and len(parts) == 4 and parts[2].isdigit() and \
                not os.path.exists("/proc/" + parts[2]):
            subprocess.run(["ip", "netns", "del", name], capture_output=True, timeout=10)


def _ip(*args, ns=None):
    argv = (["ip", "netns", "exec", ns, "ip"] if ns else ["ip"]) + list(args)
    subprocess.run(argv, check=True, capture_output=True, timeout=10)


class NetnsEndpoint:
    def __init__(self, label, ca=None):
        n = next(_counter)
        self.ns = "gtmesh-ep-%d-%d" % (os.getpid(), n)
        block = (os.getpid() * 8 + n) % 16384  # a /30 of 10.213.0.0/16
        base = (10 << 24) | (213 << 16) | (block << 2)
        quad = lambda v: "%d.%d.%d.%d" % (v >> 24, (v >> 16) & 255, (v >> 8) & 255, v & 255)
        self.host_address, self.address = quad(base + 1), quad(base + 2)
        self.label = label
        self.dir = tempfile.mkdtemp(prefix="gtmesh-ep-")
        self.control = os.path.join(self.dir, "control.json")
        self.hits_path = os.path.join(self.dir, "hits")
        self.proc = None
        host_if, ns_if = "gtep%dh%d" % (os.getpid() % 100000, n), "gtep%dn%d" % (os.getpid() % 100000, n)
        self.set(delay=0.0)
        open(self.hits_path, "w").close()
        if n == 0:
            _remove_stale()
        cert = key = None
        if ca:
            cert, key = issue_certificate(self.dir, "server", "IP:" + self.address, ca)
        try:
            _ip("netns", "add", self.ns)
            _ip("link", "add", host_if, "type", "veth", "peer", "name", ns_if)
            _ip("link", "set", ns_if, "netns", self.ns)
            _ip("addr", "add", self.host_address + "/30", "dev", host_if)
            _ip("link", "set", host_if, "up")
            _ip("addr", "add", self.address + "/30", "dev", ns_if, ns=self.ns)
            _ip("link", "set", ns_if, "up", ns=self.ns)
            _ip("link", "set", "lo", "up", ns=self.ns)
            self.proc = subprocess.Popen(["ip", "netns", "exec", self.ns, sys.executable, "-c", SERVER, self.control,
                                          self.hits_path, cert or "-", key or "-", self.address],
                                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                         preexec_fn=_die_with_parent)
            line = self.proc.stdout.readline().strip()
            if not line.isdigit():
                raise RuntimeError("the endpoint server in %s did not start: %s" % (self.ns, self.proc.stderr.read()))
            self.port = int(line)
        except Exception:
            self.stop()
            raise
        scheme = "https" if cert else "http"
        self.origin = "%s://%s:%d" % (scheme, self.address, self.port)
        self.url = self.origin + "/rum.gif"

    def set(self, **changes):
        c = json.load(open(self.control)) if os.path.exists(self.control) else {}
        c.update(changes)
        tmp = self.control + ".tmp"
        with open(tmp, "w") as f:
            json.dump(c, f)
        os.replace(tmp, self.control)

    def hits(self):
        return sum(1 for _ in open(self.hits_path))

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        subprocess.run(["ip", "netns", "del", self.ns], capture_output=True, timeout=10)
        # The host side of the veth pair goes with its peer.
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and self.ns in subprocess.run(["ip", "netns", "list"], capture_output=True,
                                                                       text=True).stdout:
            time.sleep(0.05)
