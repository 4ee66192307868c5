"""A minimal client of the gtmesh mesh protocol for system tests: msgpack
(the subset the envelopes use), length-prefixed frames, the hello, and TLS
with any certificate. Tests use it to send what gtmeshctl never would: pushes
from an agent's certificate, measurements for another DC, oversized claims,
garbage. Standard library only (Debian's python3 has no msgpack)."""
import socket
import ssl
import struct
import time

KIND = {"measurements": 1, "ack": 2, "digest": 3, "delta": 4, "config_push": 5, "config_reply": 6, "request": 7,
        "reply": 8, "hello": 10, "consensus": 11, "proposal": 12, "proposal_reply": 13}
ROLE = {"decider": 1, "agent": 2, "operator": 3}


def pack(x):
    if x is None:
        return b"\xc0"
    if x is True:
        return b"\xc3"
    if x is False:
        return b"\xc2"
    if isinstance(x, int):
        if 0 <= x < 0x80:
            return bytes([x])
        if 0 <= x <= 0xFF:
            return b"\xcc" + bytes([x])
        if 0 <= x <= 0xFFFF:
            return b"\xcd" + struct.pack(">H", x)
        if 0 <= x <= 0xFFFFFFFF:
            return b"\xce" + struct.pack(">I", x)
        if x >= 0:
            return b"\xcf" + struct.pack(">Q", x)
        return b"\xd3" + struct.pack(">q", x)
    if isinstance(x, float):
        return b"\xcb" + struct.pack(">d", x)
    if isinstance(x, str):
        b = x.encode()
        if len(b) < 32:
            return bytes([0xA0 | len(b)]) + b
        if len(b) <= 0xFF:
            return b"\xd9" + bytes([len(b)]) + b
        if len(b) <= 0xFFFF:
            return b"\xda" + struct.pack(">H", len(b)) + b
        return b"\xdb" + struct.pack(">I", len(b)) + b
    if isinstance(x, (bytes, bytearray)):
        b = bytes(x)
        if len(b) <= 0xFF:
            return b"\xc4" + bytes([len(b)]) + b
        if len(b) <= 0xFFFF:
            return b"\xc5" + struct.pack(">H", len(b)) + b
        return b"\xc6" + struct.pack(">I", len(b)) + b
    if isinstance(x, (list, tuple)):
        head = bytes([0x90 | len(x)]) if len(x) < 16 else b"\xdc" + struct.pack(">H", len(x))
        return head + b"".join(pack(v) for v in x)
    if isinstance(x, dict):
        head = bytes([0x80 | len(x)]) if len(x) < 16 else b"\xde" + struct.pack(">H", len(x))
        return head + b"".join(pack(k) + pack(v) for k, v in x.items())
    raise TypeError(type(x))


def unpack(b, i=0):
    """Decodes one value at offset i; returns (value, next offset)."""
    t = b[i]
    i += 1
    if t < 0x80:
        return t, i
    if t >= 0xE0:
        return t - 0x100, i
    if 0x80 <= t <= 0x8F:
        return _map(b, i, t & 0x0F)
    if 0x90 <= t <= 0x9F:
        return _array(b, i, t & 0x0F)
    if 0xA0 <= t <= 0xBF:
        n = t & 0x1F
        return b[i:i + n].decode(errors="replace"), i + n
    simple = {0xC0: None, 0xC2: False, 0xC3: True}
    if t in simple:
        return simple[t], i
    sizes = {0xCC: ">B", 0xCD: ">H", 0xCE: ">I", 0xCF: ">Q", 0xD0: ">b", 0xD1: ">h", 0xD2: ">i", 0xD3: ">q",
             0xCA: ">f", 0xCB: ">d"}
    if t in sizes:
        fmt = sizes[t]
        n = struct.calcsize(fmt)
        return struct.unpack(fmt, b[i:i + n])[0], i + n
    if t in (0xC4, 0xC5, 0xC6, 0xD9, 0xDA, 0xDB):
        fmt = {0xC4: ">B", 0xC5: ">H", 0xC6: ">I", 0xD9: ">B", 0xDA: ">H", 0xDB: ">I"}[t]
        n = struct.calcsize(fmt)
        length = struct.unpack(fmt, b[i:i + n])[0]
        i += n
        raw = b[i:i + length]
        return (raw if t in (0xC4, 0xC5, 0xC6) else raw.decode(errors="replace")), i + length
    if t in (0xDC, 0xDD):
        fmt = ">H" if t == 0xDC else ">I"
        n = struct.calcsize(fmt)
        return _array(b, i + n, struct.unpack(fmt, b[i:i + n])[0])
    if t in (0xDE, 0xDF):
        fmt = ">H" if t == 0xDE else ">I"
        n = struct.calcsize(fmt)
        return _map(b, i + n, struct.unpack(fmt, b[i:i + n])[0])
    raise ValueError("msgpack type 0x%02x" % t)


def _map(b, i, n):
    out = {}
    for _ in range(n):
        k, i = unpack(b, i)
        v, i = unpack(b, i)
        out[k] = v
    return out, i


def _array(b, i, n):
    out = []
    for _ in range(n):
        v, i = unpack(b, i)
        out.append(v)
    return out, i


def envelope(kind, sender, body):
    """body: a dict (packed here) or bytes (already packed)."""
    raw = body if isinstance(body, (bytes, bytearray)) else pack(body)
    return pack({"v": 1, "k": KIND[kind], "s": sender, "b": bytes(raw)})


def framed(payload):
    return struct.pack(">I", len(payload)) + payload


class Link:
    """One link to a decider: TCP or mutual TLS, hello sent, frames read."""

    def __init__(self, host, port, name, role, dc="", tls=None, timeout=5.0, hello=True, hello_extra=None):
        raw = socket.create_connection((host, port), timeout=timeout)
        if tls:
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
            ctx.check_hostname = False
            ctx.load_verify_locations(tls["ca"])
            ctx.load_cert_chain(tls["cert"], tls["key"])
            self.sock = ctx.wrap_socket(raw)
        else:
            self.sock = raw
        self.sock.settimeout(timeout)
        self.buf = b""
        self.name = name
        if hello:
            # Without hello_extra, the hello of 0.1.0 (no protocol version).
            self.send("hello", dict({"n": name, "r": ROLE[role], "dc": dc, "a": ""}, **(hello_extra or {})))

    def send(self, kind, body, sender=None):
        self.sock.sendall(framed(envelope(kind, sender or self.name, body)))

    def send_raw(self, data):
        self.sock.sendall(data)

    def frame(self, deadline):
        """The next non-heartbeat frame as a decoded envelope (dict), or None
        when the link closes or the deadline passes."""
        while time.monotonic() < deadline:
            while len(self.buf) >= 4:
                n = struct.unpack(">I", self.buf[:4])[0]
                if len(self.buf) < 4 + n:
                    break
                payload, self.buf = self.buf[4:4 + n], self.buf[4 + n:]
                if n == 0:
                    continue
                env, _ = unpack(payload)
                return env
            try:
                chunk = self.sock.recv(65536)
            except socket.timeout:
                continue
            except (ConnectionError, ssl.SSLError, OSError):
                return None
            if not chunk:
                return None
            self.buf += chunk
        return None

    def expect(self, kinds, seconds=5.0):
        """The next envelope whose kind is in `kinds`, with its body decoded."""
        deadline = time.monotonic() + seconds
        want = {KIND[k] for k in kinds}
        while True:
            env = self.frame(deadline)
            if env is None:
                return None
            if env.get("k") in want:
                env["body"], _ = unpack(env["b"])
                return env

    def closed_within(self, seconds):
        """True if the peer closes the link within `seconds` (heartbeats are read and ignored)."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            try:
                chunk = self.sock.recv(65536)
            except socket.timeout:
                continue
            except (ConnectionError, ssl.SSLError, OSError):
                return True
            if not chunk:
                return True
        return False

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


def request(link, command, args=(), seconds=5.0):
    link.send("request", {"c": command, "a": list(args)})
    env = link.expect(["reply"], seconds)
    return None if env is None else (env["body"].get("ok"), env["body"].get("t"))
