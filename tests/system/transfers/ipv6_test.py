#!/usr/bin/python3
"""System test: zone transfers over IPv6 (issue 44). `gtmesh serve` of
configs/examples/transfers.yaml (view fail_safe), listening on [::1] and
127.0.0.1, with example.com allowed from "::1" alone and `notify:` naming
a Knot on [::1]:

1. `kdig @::1 AXFR` gets exactly the records the IPv4 listener would give
   an allowed client, SOA first and last; the same from 127.0.0.1 is
   REFUSED (the ACL matches IPv6 addresses, and only those it lists), and
   counted.
2. Knot, on ::1 with gtmesh at ::1 as its primary, pulls the zone over IPv6
   and answers every name as gtmesh does.
3. A reload that changes one record: gtmesh's NOTIFY to [::1] gets Knot to
   serial 2 within 2 s, by an incremental IXFR over IPv6 (counted), and
   `kdig @::1 IXFR=1` is the change alone.
4. DoT and XoT on [::1] (`--dot [::1]:PORT`): `kdig +tls` (the certificate
   checked) gets the UDP answer and the TCP AXFR's records.
"""

import os
import shutil
import signal
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "dns_lib"))
sys.path.insert(0, HERE)
from gtmesh_dns import Checks, GtmeshServer, dig, kdig, status_of, wait_until  # noqa: E402
from transfers_test import (CONFIG, EXPECTED, STATE, answers, free_port, start_knot, stop,  # noqa: E402
                            xfr_records)
from dot_test import make_certificate  # noqa: E402


def serial6(port):
    out = dig("::1", port, "example.com", "SOA", "+short", "+time=1", "+tries=1").split()
    return out[2] if len(out) >= 3 and out[2].isdigit() else None


def main():
    t = Checks("dns_transfers_ipv6")
    workdir = tempfile.mkdtemp(prefix="gtmesh-xfr-v6-")
    server = knot = None
    try:
        knot_port = free_port()
        text = open(CONFIG).read()
        allow = '      allow: [127.0.0.1, "::1"]\n'
        t.check(allow in text and "      view: current\n" in text, "the example allows 127.0.0.1 and ::1, view current")
        text = text.replace(allow, f'      allow: ["::1"]\n      notify: ["[::1]:{knot_port}"]\n', 1)
        text = text.replace("      view: current\n", "      view: fail_safe\n", 1)
        config = os.path.join(workdir, "v6.yaml")
        with open(config, "w") as f:
            f.write(text)
        ca, cert, key = make_certificate(workdir)
        dot_port = free_port()
        server = GtmeshServer(workdir, config, state=STATE, listens=("[::1]:0", "127.0.0.1:0"),
                              extra=["--udp-threads", "1", "--dot", "[::1]:%d" % dot_port, "--dot-cert", cert,
                                     "--dot-key", key]).start()
        (host6, port6), (host4, port4) = server.addresses
        t.equal(host6, "::1", "the first listener is on ::1")

        # 1. AXFR over IPv6; the ACL.
        rows = xfr_records(kdig("::1", port6, "AXFR", "example.com"))
        soa = [r for r in EXPECTED if r[2] == "SOA"]
        want = sorted([r for r in EXPECTED if r[0] != "www.example.com."] + soa +
                      [("www.example.com.", "30", "A", "192.0.2.250")])  # www as its fail_safe; SOA twice
        t.equal(sorted(rows), want, "kdig @::1 AXFR: the zone, www as its fail_safe")
        t.check(rows[:1] == soa and rows[-1:] == soa, "SOA first and last")
        t.equal(sorted(xfr_records(dig("::1", port6, "AXFR", "example.com"))), sorted(rows),
                "dig @::1 AXFR: the same records")
        before = server.counters()
        out = kdig(host4, port4, "AXFR", "example.com")
        t.check("REFUSED" in out and "192.0.2.25" not in out, "from 127.0.0.1 (not in allow: [\"::1\"]): REFUSED", out)
        after = server.counters()
        t.equal(after["xfr_refused"] - before["xfr_refused"], 1, "the refusal is counted")

        # 2. Knot over IPv6.
        knot, _, knot_log = start_knot(workdir, port6, knot_port, address="::1")
        try:
            wait_until(lambda: serial6(knot_port) == "1", 20, "Knot to load serial 1 over IPv6")
            loaded = True
        except Exception:
            loaded = False
        t.check(loaded, "Knot on ::1 pulls example.com from gtmesh on ::1", open(knot_log).read()[-1500:])
        for owner, qtype in sorted({(o, q) for o, _, q, _ in EXPECTED if o != "www.example.com."}):
            t.equal(answers("::1", knot_port, owner, qtype), answers("::1", port6, owner, qtype),
                    f"Knot: {owner} {qtype} as gtmesh answers it")

        t.equal(answers("::1", knot_port, "www.example.com.", "A")[1],
                [("www.example.com.", "30", "A", "192.0.2.250")], "Knot: www as gtmesh transfers it (its fail_safe)")

        # 3. NOTIFY to [::1], IXFR over IPv6.
        before = server.counters()
        with open(config, "w") as f:
            f.write(text.replace("answers: [192.0.2.25]", "answers: [192.0.2.26]"))
        offset = len(server.log_text())
        server.signal(signal.SIGHUP)
        server.wait_log(r"reloaded", offset)
        changed_at = time.monotonic()
        try:
            wait_until(lambda: serial6(knot_port) == "2", 2, "Knot to hold serial 2")
            moved = True
        except Exception:
            moved = False
        t.check(moved, "NOTIFY over IPv6: Knot holds serial 2 %.2f s after the reload (within 2 s)"
                % (time.monotonic() - changed_at), open(knot_log).read()[-1500:])
        got = dig("::1", knot_port, "mail.example.com", "A", "+short").split()
        t.equal(got, ["192.0.2.26"], "Knot answers the changed record")
        after = server.counters()
        t.equal(after["xfr_ixfr_incremental"] - before["xfr_ixfr_incremental"], 1,
                "Knot took it by one incremental IXFR")
        t.check(after["notify_acked"] > before["notify_acked"], "Knot's answer to the NOTIFY is counted", str(after))
        ixfr = xfr_records(kdig("::1", port6, "IXFR=1", "example.com"))
        t.equal([(r[2], r[3]) for r in ixfr if r[2] != "SOA"],
                [("A", "192.0.2.25"), ("A", "192.0.2.26")], "kdig @::1 IXFR=1: the change alone")
        t.equal(status_of(dig("::1", port6, "mail.example.com", "A")), "NOERROR", "UDP over IPv6 still answers")

        # 4. DoT and XoT over IPv6.
        tls = ["+tls-ca=%s" % ca, "+tls-hostname=dns.test"]
        udp = kdig("::1", port6, "mail.example.com", "A", "+notcp", "+short").split()
        dot = kdig("::1", dot_port, "mail.example.com", "A", *tls, "+short").split()
        t.check(dot == udp == ["192.0.2.26"], "DoT on [::1]: the UDP answer", f"DoT {dot}, UDP {udp}")
        tcp = xfr_records(kdig("::1", port6, "AXFR", "example.com"))
        xot = xfr_records(kdig("::1", dot_port, "AXFR", "example.com", *tls))
        t.check(len(xot) > 2 and sorted(xot) == sorted(tcp), "XoT on [::1]: the TCP AXFR's records", str(xot[:3]))
        code, _ = server.stop()
        t.equal(code, 0, "gtmesh exits cleanly")
    except Exception as e:  # report, then fail
        t.check(False, f"unexpected error: {e}")
    finally:
        stop(knot)
        if server:
            if t.failed:
                print(f"--- {server.log_path}\n{server.log_text()[-3000:]}")
            server.kill()
        shutil.rmtree(workdir, ignore_errors=True)
    t.finish()


if __name__ == "__main__":
    main()
