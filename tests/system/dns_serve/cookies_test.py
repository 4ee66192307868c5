#!/usr/bin/python3
"""System test: DNS Cookies (RFC 7873, server cookies per RFC 9018) across
responders that share a secret, with real dig and kdig.

Three `gtmesh serve` on loopback: A and B share one secret file, C has its
own. A server cookie learned from A is valid on B (echoed unchanged, counted
valid) and not on C; B limits loopback queries (--rrl-loopback) and exempts
the ones with a valid cookie, while a client cookie alone gets BADCOOKIE once
limited. A rotation (new secret first, the old one second, SIGHUP) keeps the
old cookies valid but replaces them; a broken secret file is reported and
the secrets in use stay.
"""

import os
import re
import signal
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "dns_lib"))
from gtmesh_dns import Checks, GtmeshServer, dig, kdig, status_of  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ZONE = os.path.join(HERE, "zone.yaml")


def burst_client_cookie(host, port, n):
    """n queries carrying only a client cookie, as fast as they go; the RCODE
    text of each response ("TIMEOUT" when none came)."""
    import dns.edns
    import dns.exception
    import dns.message
    import dns.query
    import dns.rcode
    out = []
    for _ in range(n):
        q = dns.message.make_query("www.example.test", "A", use_edns=0,
                                   options=[dns.edns.GenericOption(10, bytes.fromhex("2464c4abcf10c957"))])
        try:
            r = dns.query.udp(q, host, port=int(port), timeout=1, ignore_trailing=True)
            out.append(dns.rcode.to_text(r.rcode()))
        except dns.exception.Timeout:
            out.append("TIMEOUT")
    return out


def cookie_of(out):
    """The COOKIE line of dig/kdig output, lower-case hex (client + server)."""
    m = re.search(r"COOKIE: ([0-9A-Fa-f]+)", out)
    return m.group(1).lower() if m else None


def secret():
    return subprocess.run(["openssl", "rand", "-hex", "16"], capture_output=True, text=True, check=True).stdout.strip()


def main():
    t = Checks("dns_cookies")
    with tempfile.TemporaryDirectory(prefix="gtmesh-cookies-") as workdir:
        shared = os.path.join(workdir, "cookie-secret")
        other = os.path.join(workdir, "other-secret")
        old_secret = secret()
        with open(shared, "w") as f:
            f.write("# the cluster's DNS cookie secret\n" + old_secret + "\n")
        with open(other, "w") as f:
            f.write(secret() + "\n")
        a = GtmeshServer(workdir, ZONE, name="a", extra=["--cookie-secret", shared]).start()
        b = GtmeshServer(workdir, ZONE, name="b", extra=["--cookie-secret", shared, "--rrl-rate", "5", "--rrl-slip",
                                                           "1", "--rrl-loopback", "--udp-threads", "1"]).start()
        c = GtmeshServer(workdir, ZONE, name="c", extra=["--cookie-secret", other]).start()
        try:
            out = dig(a.host, a.port, "www.example.test", "A", "+cookie")
            learned = cookie_of(out)
            t.check(status_of(out) == "NOERROR" and learned and len(learned) == 48 and "(good)" in out,
                    "A answers a client cookie with an RFC 9018 server cookie (dig checks its client cookie)", out)
            if not learned:
                t.finish()
            server_part = learned[16:]
            t.check(server_part.startswith("01000000"), "server cookie version 1, reserved 0 (RFC 9018 4.2)", learned)

            out = dig(b.host, b.port, "www.example.test", "A", "+cookie=" + learned)
            t.equal(cookie_of(out), learned, "B accepts A's cookie: the same server cookie comes back (shared secret)")
            out = dig(c.host, c.port, "www.example.test", "A", "+cookie=" + learned)
            t.check(status_of(out) == "NOERROR" and cookie_of(out) and cookie_of(out) != learned,
                    "C (another secret) answers normally with a new server cookie of its own (RFC 7873 5.2.4)", out)
            kout = kdig(b.host, b.port, "www.example.test", "A", "+cookie=" + learned)
            t.equal(cookie_of(kout), learned, "kdig: B echoes the valid cookie")

            # RRL on B: a valid cookie is exempt; a client cookie alone gets BADCOOKIE once limited.
            before = b.counters()
            valid_answers = sum(1 for _ in range(25) if status_of(
                out := dig(b.host, b.port, "www.example.test", "A", "+cookie=" + learned, "+tries=1", "+time=1"))
                == "NOERROR" and "192.0.2.10" in out and " tc" not in out.split("flags:")[1].split(";")[0])
            t.equal(valid_answers, 25, "RFC 7873 5.2.5 / RRL: 25 queries with a valid cookie, all answered in full")
            # Sent back to back from this process (dnspython), not one dig
            # process each: on a loaded machine 25 digs can take longer than
            # the rate limit's window, and the test would measure the load.
            statuses = burst_client_cookie(b.host, b.port, 25)
            t.check(statuses.count("BADCOOKIE") >= 15,
                    "RFC 7873 5.2.3: rate limited, a client cookie alone gets BADCOOKIE (not a TC slip)",
                    str(statuses))
            after = b.counters()
            t.check(after["cookie_valid"] - before["cookie_valid"] >= 25 and
                    after["badcookie"] - before["badcookie"] == statuses.count("BADCOOKIE"),
                    "B counts valid cookies and BADCOOKIE responses",
                    f"{before.get('cookie_valid')}->{after.get('cookie_valid')}, badcookie {after.get('badcookie')}")

            # Rotation: the new secret first, the old one second; SIGHUP B.
            with open(shared, "w") as f:
                f.write(secret() + "\n" + old_secret + "\n")
            offset = len(b.log_text())
            b.signal(signal.SIGHUP)
            b.wait_log(r"^gtmesh serve: reloaded", offset)
            before = b.counters()
            out = dig(b.host, b.port, "www.example.test", "A", "+cookie=" + learned)
            renewed = cookie_of(out)
            after = b.counters()
            t.check(status_of(out) == "NOERROR" and renewed and renewed != learned and renewed[:16] == learned[:16]
                    and after["cookie_valid"] == before["cookie_valid"] + 1,
                    "after a rotation the old cookie is still valid (the previous secret) and is replaced", out)
            out = dig(b.host, b.port, "www.example.test", "A", "+cookie=" + renewed)
            t.equal(cookie_of(out), renewed, "the renewed cookie (new secret) is echoed")

            # A broken secret file: reported, the secrets in use stay.
            with open(shared, "w") as f:
                f.write("not-hex\n")
            offset = len(b.log_text())
            b.signal(signal.SIGHUP)
            m, _ = b.wait_log(r"cookie-secret:1: expected a secret of 32 hex digits.*the cookie secrets in use stay",
                              offset)
            t.check(bool(m), "a broken secret file is reported with file:line on SIGHUP")
            out = dig(b.host, b.port, "www.example.test", "A", "+cookie=" + renewed)
            t.equal(cookie_of(out), renewed, "after a broken file the secrets in use stay")

            # A missing or malformed secret file at start: a clear error, exit 1.
            bad = GtmeshServer(workdir, ZONE, name="bad", extra=["--cookie-secret", shared])
            try:
                bad.start(timeout=10)
                t.check(False, "a broken secret file at start is refused")
            except RuntimeError as e:
                t.check("expected a secret of 32 hex digits" in str(e), "a broken secret file at start is refused "
                        "with file:line", str(e)[-300:])
        finally:
            for s in (a, b, c):
                s.stop()
    t.finish()


if __name__ == "__main__":
    main()
