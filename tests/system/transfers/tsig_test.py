#!/usr/bin/python3
"""System test: TSIG (RFC 8945, HMAC-SHA256) on transfers, queries and
NOTIFY out of `gtmesh serve` (docs/transfers.md, "TSIG").

configs/examples/transfers.yaml with two keys (one file as `tsig-keygen`
writes it, one a bare base64 secret), example.com transferable only with
the first key, and a zone of 3,000 records only from 127.0.0.0/8 with the
second. Signed responses are checked by clients that verify them
(dnspython, kdig, dig: each verifies every message of a transfer).

1. Signed AXFRs: example.com with its key gives exactly the zone (dnspython,
   kdig, dig); the big zone goes out in several messages, each signed and
   verified, every record once.
2. Unsigned, or signed with a key the zone does not allow: REFUSED (the
   latter answered signed).
3. A signed SOA query over UDP (what a secondary asks before it pulls):
   NOERROR, signed.
4. Bad input, over UDP and TCP, each answered and counted: a key this server
   does not have (BADKEY), a wrong secret (BADSIG), a request signed 10
   minutes ago, as a replay is (BADTIME, answered signed with our time), a
   MAC cut to 16 bytes (BADTRUNC, signed; BADSIG when those 16 bytes do not
   match), a MAC of 8 bytes and a TSIG cut short
   (FORMERR), a record after the TSIG (FORMERR).
5. Knot, NSD and BIND, given the key, pull example.com (which they could
   not without it) and answer every name as gtmesh does.
6. A NOTIFY signed with the key reaches a Knot whose ACL takes only signed
   NOTIFYs: after a reload that changes a record it holds the new serial
   within 2 s (its own refresh is an hour away).
"""

import base64
import hashlib
import hmac
import os
import socket
import struct
import subprocess
import sys
import tempfile
import time

import dns.message
import dns.name
import dns.query
import dns.rcode
import dns.rdatatype
import dns.tsig
import dns.tsigkeyring

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "dns_lib"))
sys.path.insert(0, HERE)
from gtmesh_dns import Checks, GtmeshServer, dig, kdig, status_of  # noqa: E402
from transfers_test import (CONFIG, EXPECTED, STATE, clean_up, compare_secondary, knot_follows_notify,  # noqa: E402
                            start_bind, start_knot, start_nsd, xfr_records)

SRC = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
sys.path.insert(0, os.path.join(SRC, "tools"))
from free_port import free_port  # noqa: E402

XFR_KEY = "xfr-key"
BIG_KEY = "big-key"


def tsig_wire(message, key_name, secret, time_signed, mac_length=32, fudge=300, after=b""):
    """`message` (a query, wire form) signed by hand (RFC 8945 4.3): the TSIG
    record appended with its MAC cut to `mac_length` bytes, then `after`
    (more records, counted in ARCOUNT); returns (wire, full MAC)."""
    def name_wire(name):
        return b"".join(bytes([len(label)]) + label.encode() for label in name.rstrip(".").split(".")) + b"\0"
    key = name_wire(key_name)
    algorithm = name_wire("hmac-sha256")
    qid = message[:2]
    when = struct.pack(">Q", time_signed)[2:]
    variables = key + struct.pack(">HI", 255, 0) + algorithm + when + struct.pack(">HHH", fudge, 0, 0)
    mac = hmac.new(secret, message + variables, hashlib.sha256).digest()
    cut = mac[:mac_length]
    rdata = algorithm + when + struct.pack(">HH", fudge, len(cut)) + cut + qid + struct.pack(">HH", 0, 0)
    record = key + struct.pack(">HHIH", 250, 255, 0, len(rdata)) + rdata
    arcount = struct.unpack(">H", message[10:12])[0] + 1 + (1 if after else 0)
    wire = message[:10] + struct.pack(">H", arcount) + message[12:] + record + after
    return wire, mac


def udp_ask(host, port, wire, timeout=2):
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.settimeout(timeout)
        s.sendto(wire, (host, port))
        return s.recv(65535)


def tsig_verdict(response_wire, keyring, request_mac):
    """What a verifying client makes of a response: ('ok', rcode text) when
    it is signed and verifies, else the TSIG error dnspython reports."""
    try:
        r = dns.message.from_wire(response_wire, keyring=keyring, request_mac=request_mac)
    except dns.tsig.PeerBadKey:
        return "BADKEY", None
    except dns.tsig.PeerBadSignature:
        return "BADSIG", None
    except dns.tsig.PeerBadTime:
        return "BADTIME", None
    except dns.tsig.PeerBadTruncation:
        return "BADTRUNC", None
    except Exception as e:  # noqa: BLE001 - reported as what it is
        return type(e).__name__, None
    return ("ok" if r.had_tsig else "unsigned"), dns.rcode.to_text(r.rcode())


def main():
    t = Checks("dns_transfers_tsig")
    workdir = tempfile.mkdtemp(prefix="gtmesh-tsig-")
    server = notifier = knot = nsd = bind = knot2 = None
    logs = []
    try:
        # Keys: one as tsig-keygen writes it, one a bare base64 secret.
        keygen = subprocess.run(["tsig-keygen", "-a", "hmac-sha256", XFR_KEY], capture_output=True, text=True)
        t.check(keygen.returncode == 0 and "secret" in keygen.stdout, "tsig-keygen made a key", keygen.stderr)
        with open(os.path.join(workdir, "xfr.key"), "w") as f:
            f.write(keygen.stdout)
        xfr_b64 = keygen.stdout.split('secret "')[1].split('"')[0]
        xfr_secret = base64.b64decode(xfr_b64)
        big_secret = os.urandom(32)
        with open(os.path.join(workdir, "big.secret"), "w") as f:
            f.write(base64.b64encode(big_secret).decode() + "\n")
        keyring = dns.tsigkeyring.from_text({XFR_KEY: xfr_b64, BIG_KEY: base64.b64encode(big_secret).decode()})
        # What a client that holds "nokey" makes of the answer to it.
        with_nokey = {**keyring, **dns.tsigkeyring.from_text({"nokey": xfr_b64})}
        xfr_name, big_name = dns.name.from_text(XFR_KEY), dns.name.from_text(BIG_KEY)

        config = os.path.join(workdir, "tsig.yaml")
        text = open(CONFIG).read()
        text = text.replace("datacenters:\n", "tsig_keys:\n  - {name: %s, secret_file: xfr.key}\n"
                            "  - {name: %s, secret_file: big.secret}\ndatacenters:\n" % (XFR_KEY, BIG_KEY), 1)
        text = text.replace('      allow: [127.0.0.1, "::1"]\n    records:', "      allow: [{key: %s}]\n    records:"
                            % XFR_KEY, 1)
        text = text.replace("zones:\n", "zones:\n  - name: big.test\n"
                            "    soa: {primary: ns1.big.test., admin: hostmaster.big.test.}\n    ns: [ns1.big.test.]\n"
                            "    transfer: {view: omit, allow: [{address: 127.0.0.0/8, key: %s}]}\n    records:\n"
                            % BIG_KEY + "".join("      - {name: host%d, type: A, answers: [10.0.%d.%d]}\n"
                                                % (i, i // 256, i % 256) for i in range(3000)), 1)
        t.check(text.count(XFR_KEY) == 2 and "{key: %s}" % XFR_KEY in text, "the keyed variant of the example")
        with open(config, "w") as f:
            f.write(text)
        check = subprocess.run([os.environ.get("GTMESH_BIN", "gtmesh"), "check-config", config], capture_output=True,
                               text=True)
        t.check(check.returncode == 0, "gtmesh check-config accepts it", check.stdout + check.stderr)
        server = GtmeshServer(workdir, config, state=STATE, extra=["--udp-threads", "1"]).start()
        host, port = server.host, server.port
        before = server.counters()

        # 1. Signed AXFRs, verified by the clients.
        msgs = list(dns.query.xfr(host, "example.com", port=port, keyring=keyring, keyname=xfr_name, lifetime=10,
                                  relativize=False))
        got = sorted((r.name.to_text(), str(r.ttl), dns.rdatatype.to_text(r.rdtype), rd.to_text())
                     for m in msgs for r in m.answer for rd in r)
        t.equal(sorted(set(got)), EXPECTED, "dnspython AXFR with the key: every record of example.com, verified")
        t.check(all(m.had_tsig for m in msgs), "every message of it signed (%d)" % len(msgs))
        out = kdig(host, port, "AXFR", "example.com", "-y", "hmac-sha256:%s:%s" % (XFR_KEY, xfr_b64))
        rows = [r for r in xfr_records(out) if r[2] != "TSIG"]
        t.equal(sorted(rows[:-1]), EXPECTED, "kdig -y AXFR: the same records")
        out = dig(host, port, "AXFR", "example.com", "-y", "hmac-sha256:%s:%s" % (XFR_KEY, xfr_b64))
        rows = [r for r in xfr_records(out) if r[2] != "TSIG"]
        t.check(sorted(rows[:-1]) == EXPECTED and "verify" not in out and "failed" not in out,
                "dig -y AXFR: the same records, its signatures verified", out[-500:])
        msgs = list(dns.query.xfr(host, "big.test", port=port, keyring=keyring, keyname=big_name, lifetime=10))
        hosts = [r.name.to_text() for m in msgs for r in m.answer if r.rdtype == dns.rdatatype.A]
        t.check(len(msgs) > 1 and all(m.had_tsig for m in msgs),
                "3,000 records with the other key: %d messages, each signed and verified" % len(msgs))
        t.equal((len(hosts), len(set(hosts))), (3000, 3000), "every record once")
        out = dig(host, port, "AXFR", "big.test", "-y", "hmac-sha256:%s:%s" % (BIG_KEY, base64.b64encode(
            big_secret).decode()))
        t.check("verify" not in out and "failed" not in out and out.count("\tA\t") == 3000,
                "dig -y verifies every message of it", out[-400:])

        # 2. Not allowed.
        out = kdig(host, port, "AXFR", "example.com")
        t.check("REFUSED" in out and "www.example.com" not in out, "unsigned AXFR of example.com: REFUSED", out)
        q = dns.message.make_query("example.com", "AXFR")
        q.use_tsig(keyring, keyname=big_name)
        r = dns.query.tcp(q, host, port=port, timeout=5)
        t.check(r.rcode() == dns.rcode.REFUSED and r.had_tsig,
                "signed with a key the zone does not allow: REFUSED, answered signed (verified)",
                dns.rcode.to_text(r.rcode()))

        # 3. A signed SOA query over UDP.
        q = dns.message.make_query("example.com", "SOA")
        q.use_tsig(keyring, keyname=xfr_name)
        r = dns.query.udp(q, host, port=port, timeout=5)
        t.check(r.rcode() == dns.rcode.NOERROR and r.had_tsig and len(r.answer) == 1,
                "signed SOA over UDP: NOERROR, the SOA, signed (verified)", r.to_text())

        # 4. Bad input.
        plain = dns.message.make_query("example.com", "SOA", use_edns=False).to_wire()
        now = int(time.time())
        wire, mac = tsig_wire(plain, XFR_KEY, xfr_secret, now)
        t.equal(tsig_verdict(udp_ask(host, port, wire), keyring, mac), ("ok", "NOERROR"),
                "a request signed by this test's own code: answered, signed")
        cases = [
            ("a key this server does not have", tsig_wire(plain, "nokey", xfr_secret, now), "BADKEY"),
            ("a wrong secret", tsig_wire(plain, XFR_KEY, big_secret, now), "BADSIG"),
            ("signed 10 minutes ago (a replay)", tsig_wire(plain, XFR_KEY, xfr_secret, now - 600), "BADTIME"),
            ("a MAC cut to 16 bytes", tsig_wire(plain, XFR_KEY, xfr_secret, now, 16), "BADTRUNC"),
            ("a MAC cut to 16 bytes that does not match", tsig_wire(plain, XFR_KEY, big_secret, now, 16), "BADSIG"),
        ]
        for what, (w, m), want in cases:
            t.equal(tsig_verdict(udp_ask(host, port, w), with_nokey, m)[0], want, "UDP, %s: %s" % (what, want))
        formerrs = [
            ("a MAC of 8 bytes", tsig_wire(plain, XFR_KEY, xfr_secret, now, 8)[0]),
            ("a TSIG cut short", wire[:-3]),
            ("a record after the TSIG", tsig_wire(plain, XFR_KEY, xfr_secret, now,
                                                  after=b"\0" + struct.pack(">HHIH", 41, 1232, 0, 0))[0]),
        ]
        for what, w in formerrs:
            resp = udp_ask(host, port, w)
            t.equal(resp[3] & 0x0F, dns.rcode.FORMERR, "UDP, %s: FORMERR" % what)
        # The same over TCP, on a transfer.
        out = kdig(host, port, "AXFR", "example.com", "-y", "hmac-sha256:%s:%s" % (
            XFR_KEY, base64.b64encode(big_secret).decode()))
        t.check("BADSIG" in out and "www.example.com" not in out, "TCP AXFR with a wrong secret: BADSIG", out)
        axfr = dns.message.make_query("example.com", "AXFR", use_edns=False).to_wire()
        w, m = tsig_wire(axfr, XFR_KEY, xfr_secret, now - 600)
        with socket.create_connection((host, port), timeout=5) as s:
            s.sendall(struct.pack(">H", len(w)) + w)
            length = struct.unpack(">H", s.recv(2, socket.MSG_WAITALL))[0]
            resp = s.recv(length, socket.MSG_WAITALL)
        t.equal(tsig_verdict(resp, keyring, m)[0], "BADTIME", "TCP AXFR replayed 10 minutes late: BADTIME")
        after = server.counters()
        delta = {k: after[k] - before[k] for k in after if k.startswith("tsig_")}
        # valid: 3 AXFRs + 2 transfers of big.test + the REFUSED one + SOA + the hand-signed one (dig and kdig count once each)
        t.equal({k: delta[k] for k in ("tsig_badkey", "tsig_badsig", "tsig_badtime", "tsig_badtrunc", "tsig_formerr")},
                {"tsig_badkey": 1, "tsig_badsig": 3, "tsig_badtime": 2, "tsig_badtrunc": 1, "tsig_formerr": 3},
                "every bad request counted by its verdict")
        t.check(delta["tsig_valid"] >= 8, "the good ones counted as valid (%d)" % delta["tsig_valid"])
        t.equal(status_of(dig(host, port, "www.example.net", "A", "+notcp")), "NOERROR",
                "unsigned queries still answered")

        # 5. Real secondaries with the key.
        key = (XFR_KEY, xfr_b64)
        knot, knot_port, knot_log = start_knot(workdir, port, key=key)
        logs.append(knot_log)
        compare_secondary(t, "Knot", knot_port, server)
        nsd, nsd_port, nsd_log = start_nsd(workdir, port, key=key)
        logs += [nsd_log, os.path.join(workdir, "nsd", "nsd.out")]
        compare_secondary(t, "NSD", nsd_port, server)
        bind, bind_port, bind_log = start_bind(workdir, port, key=key)
        logs.append(bind_log)
        compare_secondary(t, "BIND", bind_port, server)

        # 6. A signed NOTIFY to a Knot that takes only signed ones.
        knot2_port = free_port()
        notify_config = os.path.join(workdir, "notify.yaml")
        notify_text = text.replace("      allow: [{key: %s}]\n    records:" % XFR_KEY,
                                   "      allow: [{key: %s}]\n      notify: [{address: \"127.0.0.1:%d\", key: %s}]\n"
                                   "    records:" % (XFR_KEY, knot2_port, XFR_KEY), 1)
        t.check("notify:" in notify_text, "the notify variant")
        with open(notify_config, "w") as f:
            f.write(notify_text)
        notifier = GtmeshServer(workdir, notify_config, state=STATE, extra=["--udp-threads", "1"],
                                name="notifier").start()
        knot2 = knot_follows_notify(t, workdir, notifier, notify_config, notify_text, knot2_port, logs, key=key,
                                    what="signed NOTIFY")
        code, _ = server.stop()
        t.equal(code, 0, "gtmesh exits cleanly")
    except Exception as e:  # report, then fail
        t.check(False, f"unexpected error: {type(e).__name__}: {e}")
    finally:
        clean_up(t, workdir, (knot, nsd, bind, knot2), (server, notifier), logs)
    t.finish()


if __name__ == "__main__":
    main()
