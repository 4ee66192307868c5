#!/usr/bin/python3
"""System test: DNS over TLS (RFC 7858) and zone transfers over it (XoT,
RFC 9103) out of `gtmesh serve --dot` (docs/dns.md, "DNS over TLS";
docs/transfers.md).

configs/examples/transfers.yaml served on UDP/TCP and on a DoT port with a
certificate for dns.test and 127.0.0.1 from a CA this test makes.

1. kdig +tls, checking the certificate against the CA and the name, gets
   the same answers over DoT as over UDP, for every name and type of the
   example (and NXDOMAIN, NODATA, REFUSED as UDP gives them).
2. TLS 1.3 and ALPN "dot" are negotiated (Python's ssl, offering dot).
3. XoT: kdig +tls AXFR gives exactly the records the TCP AXFR gives; with a
   TSIG key asked by the zone, the signed transfer over TLS verifies; BIND
   9.18 as a secondary pulls the zone over XoT (checking the certificate,
   with the key) and answers every name as gtmesh does. Mutual TLS: a zone
   that asks for the secondary's client certificate (tls_client, verified
   against --dot-client-ca) transfers with it, is REFUSED without one or
   with one for another name, and a certificate from another CA fails the
   handshake (counted); plain DoT queries need none. NSD 4.6 (tls-auth,
   which sends no client certificate before 4.10) pulls the keyed zone over
   XoT with TSIG and answers every name as gtmesh does.
4. Bad input, each counted and none stopping DoT: plain DNS over TCP sent
   to the DoT port, a TLS 1.2-only client, a client offering only ALPN h2,
   a client that connects and never shakes hands (closed by the idle
   timeout); then kdig +tls still gets its answer.
"""

import os
import shutil
import socket
import ssl
import struct
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "dns_lib"))
sys.path.insert(0, HERE)
from gtmesh_dns import Checks, GtmeshServer, dig, kdig, run, status_of, wait_until  # noqa: E402
from transfers_test import (CONFIG, EXPECTED, STATE, answers, serial_at, start_bind, start_nsd, stop,  # noqa: E402
                            xfr_records)

SRC = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
sys.path.insert(0, os.path.join(SRC, "tools"))
from free_port import free_port  # noqa: E402

QUESTIONS = sorted({(owner, qtype) for owner, _, qtype, _ in EXPECTED} |
                   {("nothere.example.com.", "A"), ("mail.example.com.", "AAAA"), ("www.example.net.", "A"),
                    ("www.elsewhere.org.", "A")})


def make_certificate(workdir):
    """A CA, and a certificate it signs for dns.test and 127.0.0.1."""
    def openssl(*args):
        r = subprocess.run(["openssl", *args], capture_output=True, text=True, cwd=workdir)
        if r.returncode != 0:
            raise RuntimeError("openssl " + " ".join(args) + ": " + r.stderr)
    openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "2",
            "-subj", "/CN=gtmesh test CA", "-keyout", "ca.key", "-out", "ca.pem")
    openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-subj", "/CN=dns.test",
            "-keyout", "dot.key", "-out", "dot.csr")
    with open(os.path.join(workdir, "san.ext"), "w") as f:
        f.write("subjectAltName=DNS:dns.test,IP:127.0.0.1\n")
    openssl("x509", "-req", "-in", "dot.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-days", "2",
            "-extfile", "san.ext", "-out", "dot.pem")
    # Client certificates for the mutual-TLS profile: two from the CA (the
    # secondary's name and another), one from a CA gtmesh does not know.
    openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "2",
            "-subj", "/CN=foreign CA", "-keyout", "foreign-ca.key", "-out", "foreign-ca.pem")
    for name, ca_name in (("secondary.test", "ca"), ("other.test", "ca"), ("foreign.test", "foreign-ca")):
        openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-subj", "/CN=" + name,
                "-keyout", name + ".key", "-out", name + ".csr")
        openssl("x509", "-req", "-in", name + ".csr", "-CA", ca_name + ".pem", "-CAkey", ca_name + ".key",
                "-CAcreateserial", "-days", "2", "-out", name + ".pem")
    return [os.path.join(workdir, n) for n in ("ca.pem", "dot.pem", "dot.key")]


def answer_of(out):
    rows = sorted(tuple(line.split()[0:1] + line.split()[2:]) for line in out.splitlines()
                  if line.strip() and not line.startswith(";"))
    return status_of(out), rows


def main():
    t = Checks("dns_transfers_xot")
    workdir = tempfile.mkdtemp(prefix="gtmesh-dot-")
    server = keyed = None
    try:
        ca, cert, key = make_certificate(workdir)
        dot_port = free_port()
        server = GtmeshServer(workdir, CONFIG, state=STATE, extra=[
            "--udp-threads", "1", "--dot", "127.0.0.1:%d" % dot_port, "--dot-cert", cert, "--dot-key", key,
            "--tcp-idle-timeout", "1s"]).start()
        host, port = server.host, server.port
        tls = ["+tls-ca=%s" % ca, "+tls-hostname=dns.test"]

        # 1. The same answers over DoT as over UDP.
        for owner, qtype in QUESTIONS:
            udp = answer_of(kdig(host, port, owner, qtype, "+notcp", "+noall", "+answer", "+header"))
            dot = answer_of(kdig(host, dot_port, owner, qtype, *tls, "+noall", "+answer", "+header"))
            t.equal(dot, udp, "DoT %s %s as UDP answers it (%s)" % (owner, qtype, udp[0]))
        out = kdig(host, dot_port, "www.example.com", "A", *tls)
        t.check("TLS session (TLS1.3)" in out, "kdig reports a TLS 1.3 session", out[:400])

        # 2. TLS 1.3 and ALPN dot.
        ctx = ssl.create_default_context(cafile=ca)
        ctx.set_alpn_protocols(["dot"])
        with socket.create_connection((host, dot_port), timeout=5) as raw:
            with ctx.wrap_socket(raw, server_hostname="dns.test") as s:
                t.equal((s.version(), s.selected_alpn_protocol()), ("TLSv1.3", "dot"),
                        "TLS 1.3 with ALPN dot, the certificate checked for dns.test")
                q = bytes.fromhex("abcd01000001000000000000") + b"\x03www\x07example\x03com\x00\x00\x01\x00\x01"
                s.sendall(struct.pack(">H", len(q)) + q)
                n = struct.unpack(">H", s.recv(2))[0]
                resp = b""
                while len(resp) < n:
                    resp += s.recv(n - len(resp))
                t.check(resp[:2] == q[:2] and resp[3] & 0x0F == 0 and struct.unpack(">H", resp[6:8])[0] >= 1,
                        "a query written by hand over that session is answered")

        # 3. XoT.
        tcp = xfr_records(kdig(host, port, "AXFR", "example.com"))
        out = kdig(host, dot_port, "AXFR", "example.com", *tls)
        xot = xfr_records(out)
        t.check(len(xot) > 2 and sorted(xot) == sorted(tcp), "XoT: kdig +tls AXFR gives the TCP AXFR's records",
                out[-400:])
        t.equal(sorted(xot[:-1]), EXPECTED, "XoT: every record of example.com")
        keygen = subprocess.run(["tsig-keygen", "-a", "hmac-sha256", "xot-key"], capture_output=True, text=True)
        with open(os.path.join(workdir, "xot.key"), "w") as f:
            f.write(keygen.stdout)
        secret = keygen.stdout.split('secret "')[1].split('"')[0]
        text = open(CONFIG).read().replace("datacenters:\n", "tsig_keys: [{name: xot-key, secret_file: xot.key}]\n"
                                           "datacenters:\n", 1)
        text = text.replace('      allow: [127.0.0.1, "::1"]\n    records:', "      allow: [{key: xot-key}]\n"
                            "    records:", 1)
        keyed_config = os.path.join(workdir, "keyed.yaml")
        with open(keyed_config, "w") as f:
            f.write(text)
        keyed_dot = free_port()
        keyed = GtmeshServer(workdir, keyed_config, state=STATE, name="keyed", extra=[
            "--udp-threads", "1", "--dot", "127.0.0.1:%d" % keyed_dot, "--dot-cert", cert, "--dot-key", key]).start()
        out = kdig(keyed.host, keyed_dot, "AXFR", "example.com", *tls)
        t.check("REFUSED" in out and "www.example.com" not in out, "XoT of a keyed zone without the key: REFUSED", out)
        out = kdig(keyed.host, keyed_dot, "AXFR", "example.com", *tls, "-y", "hmac-sha256:xot-key:" + secret)
        rows = [r for r in xfr_records(out) if r[2] != "TSIG"]
        t.check(sorted(rows[:-1]) == EXPECTED and "TSIG" in out and "failed" not in out.lower(),
                "XoT with TSIG: signed, verified by kdig, every record", out[-400:])

        # A real secondary over XoT: BIND 9.18, checking the certificate
        # against the CA and the name, with the key.
        bind, bind_port, bind_log = start_bind(workdir, keyed_dot, key=("xot-key", secret), tls=(ca, "dns.test"))
        try:
            got = wait_until(lambda: serial_at(bind_port), 20, "BIND to pull example.com over XoT")
            log = "\n".join(line for line in open(bind_log).read().splitlines() if "transfer of" in line)
            t.check(got == "1" and "xot-key" in log and "success" in log,
                    "BIND pulls example.com over XoT (its tls: ca-file and remote-hostname; TSIG)", log[-800:])
            for owner, qtype in sorted({(o, q) for o, _, q, _ in EXPECTED}):
                t.equal(answers("127.0.0.1", bind_port, owner, qtype), answers(keyed.host, keyed.port, owner, qtype),
                        "BIND (XoT): %s %s as gtmesh answers it" % (owner, qtype))
        finally:
            stop(bind)
        # And NSD 4.6 (tls-auth: the CA bundle and gtmesh's name checked).
        nsd, nsd_port, nsd_log = start_nsd(workdir, keyed_dot, key=("xot-key", secret), tls=(ca, "dns.test"))
        try:
            t.equal(wait_until(lambda: serial_at(nsd_port), 20, "NSD to pull example.com over XoT"), "1",
                    "NSD pulls example.com over XoT (tls-auth: the CA and gtmesh's name; TSIG)")
            for owner, qtype in sorted({(o, q) for o, _, q, _ in EXPECTED}):
                t.equal(answers("127.0.0.1", nsd_port, owner, qtype), answers(keyed.host, keyed.port, owner, qtype),
                        "NSD (XoT): %s %s as gtmesh answers it" % (owner, qtype))
        except Exception:
            print(open(nsd_log).read()[-2000:] if os.path.exists(nsd_log) else "no NSD log")
            raise
        finally:
            stop(nsd)

        # XoT's mutual-TLS profile: a zone that asks for the secondary's
        # client certificate (tls_client), verified against --dot-client-ca.
        text = open(CONFIG).read().replace('      allow: [127.0.0.1, "::1"]\n    records:',
                                           "      allow: [{tls_client: secondary.test}]\n    records:", 1)
        mtls_config = os.path.join(workdir, "mtls.yaml")
        with open(mtls_config, "w") as f:
            f.write(text)
        mtls_dot = free_port()
        mtls = GtmeshServer(workdir, mtls_config, state=STATE, name="mtls", extra=[
            "--udp-threads", "1", "--dot", "127.0.0.1:%d" % mtls_dot, "--dot-cert", cert, "--dot-key", key,
            "--dot-client-ca", ca]).start()
        try:
            def client(name):
                return ["+tls-certfile=" + os.path.join(workdir, name + ".pem"),
                        "+tls-keyfile=" + os.path.join(workdir, name + ".key")]
            mtls_before = mtls.counters()
            out = kdig(mtls.host, mtls_dot, "AXFR", "example.com", *tls)
            t.check("REFUSED" in out and "www.example.com" not in out, "mutual TLS: XoT without a client "
                    "certificate: REFUSED", out[-300:])
            out = kdig(mtls.host, mtls_dot, "AXFR", "example.com", *tls, *client("secondary.test"))
            t.equal(sorted(xfr_records(out)[:-1]), EXPECTED, "mutual TLS: with secondary.test's certificate, the zone")
            out = kdig(mtls.host, mtls_dot, "AXFR", "example.com", *tls, *client("other.test"))
            t.check("REFUSED" in out and "www.example.com" not in out,
                    "mutual TLS: a certificate from the CA for another name: REFUSED", out[-300:])
            out = kdig(mtls.host, mtls_dot, "AXFR", "example.com", *tls, *client("foreign.test"))
            t.check("www.example.com" not in out, "mutual TLS: a certificate from another CA: no transfer", out[-300:])
            out = kdig(mtls.host, mtls_dot, "www.example.com", "A", *tls, "+short")
            t.check("192.0.2.10" in out, "ordinary DoT without a client certificate still answers", out)
            counted = mtls.counters()
            t.equal(counted["tls_failed"] - mtls_before["tls_failed"], 1,
                    "the foreign certificate's handshake failed and was counted")
        finally:
            mtls.kill()

        # 4. Bad input.
        before = server.counters()
        q = bytes.fromhex("abcd01000001000000000000") + b"\x03www\x07example\x03com\x00\x00\x01\x00\x01"
        with socket.create_connection((host, dot_port), timeout=5) as s:
            s.sendall(struct.pack(">H", len(q)) + q)
            try:
                data = s.recv(100)
            except OSError:
                data = b""
            t.check(data[2:4] != q[:2], "plain DNS over TCP to the DoT port: no DNS answer (%d bytes back, a TLS "
                    "alert at most)" % len(data))
        out = run(["openssl", "s_client", "-connect", "127.0.0.1:%d" % dot_port, "-tls1_2", "-CAfile", ca],
                  timeout=10)
        t.check("Cipher is (NONE)" in out or "alert" in out or "no protocols available" in out,
                "a TLS 1.2-only client: refused", out[-300:])
        out = run(["openssl", "s_client", "-connect", "127.0.0.1:%d" % dot_port, "-alpn", "h2", "-CAfile", ca],
                  timeout=10)
        t.check("no application protocol" in out or "alert" in out,
                "a client offering only ALPN h2: refused", out[-300:])
        idle = socket.create_connection((host, dot_port), timeout=5)
        started = time.monotonic()
        idle.settimeout(5)
        try:
            gone = idle.recv(1) == b""
        except OSError:
            gone = True
        idle.close()
        t.check(gone and time.monotonic() - started < 4,
                "a client that never shakes hands is closed (%.1f s; idle timeout 1 s)" % (time.monotonic() - started))
        out = kdig(host, dot_port, "www.example.com", "A", *tls, "+short")
        t.check("192.0.2.10" in out, "DoT still answers afterwards", out)
        after = wait_until(lambda: (lambda c: c if c["tls_failed"] - before["tls_failed"] >= 3 else None)(
            server.counters()), 5, "the failed handshakes counted")
        t.equal(after["tls_failed"] - before["tls_failed"], 3, "three failed handshakes counted (plain, 1.2, h2)")
        t.check(after["tls_established"] - before["tls_established"] == 1 and after["tcp_idle_closed"] >
                before["tcp_idle_closed"], "one session established; the silent one closed as idle", str(
                    {k: after[k] - before[k] for k in after if k.startswith("tls_") or k == "tcp_idle_closed"}))
        t.equal(status_of(dig(host, port, "www.example.net", "A", "+notcp")), "NOERROR", "UDP answers throughout")
        code, _ = server.stop()
        t.equal(code, 0, "gtmesh exits cleanly")
    except Exception as e:  # report, then fail
        t.check(False, f"unexpected error: {type(e).__name__}: {e}")
    finally:
        for s in (server, keyed):
            if s:
                s.kill()
        if t.failed and server:
            print(f"--- {server.log_path}\n{open(server.log_path).read()[-3000:]}")
        shutil.rmtree(workdir, ignore_errors=True)
    t.finish()


if __name__ == "__main__":
    main()
