#!/usr/bin/python3
"""System test: signed zone transfers (docs/dnssec.md, "Signed zone
transfers"). A zone with `dnssec:` and `transfer:` goes out as a zone a
secondary can serve validly on its own.

`serve` (CTest dns_transfers_signed), against `gtmesh serve` of the shipped
DNSSEC example with `transfer: {view: current}` and a state file:
1. Its AXFR passes BIND's dnssec-verify and ldns-verify-zone (every name,
   the fallback view's www included, signed, one NSEC chain); the same
   AXFR with one signature byte changed fails ldns-verify-zone.
2. A Knot secondary pulls it. unbound, validating with the zone's trust
   anchor and told to ask Knot alone, validates (AD) DC mode's fallback
   view, static records, an RRset of three, a CNAME chain, a wildcard, MX,
   SRV, a name that does not exist (NSEC from the chain) and NODATA; Knot's
   www is the transferred fallback view.
3. fra goes down (the state file, SIGHUP): the serial moves, Knot holds it
   within 2 s (NOTIFY), answers www with iad's address, and delv, asking
   Knot, says "fully validated".
4. Under faketime at 120x (refresh 1m): the serial moves and the
   signatures are made again without any change, before they expire.

`cluster` (CTest dns_transfers_signed_cluster), tools/cluster.sh's three
deciders:
1. A push gives demo.example `dnssec:` and `transfer: {view: current}`:
   every decider transfers the same bytes (signatures included: the
   leader's, committed through the log) under one serial above the
   config's, and it passes dnssec-verify and ldns-verify-zone.
2. `gtmeshctl drain fra`: every decider moves to one new serial, again
   byte-identical, with www in iad, and it verifies.
"""

import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "dns_lib"))
sys.path.insert(0, os.path.join(HERE, "..", "dnssec"))
sys.path.insert(0, HERE)
from gtmesh_dns import Checks, GtmeshServer, dig, free_port, wait_until  # noqa: E402
import dnssec_lib  # noqa: E402
from transfers_test import answers, start_knot, stop  # noqa: E402

ZONE = "example.com"


def axfr_text(host, port, zone):
    """The AXFR as zone-file lines (dig, one SOA), or "" when refused."""
    out = dig(host, port, zone, "AXFR", "+onesoa", "+nocmd", "+nostats", "+nocomments")
    lines = [l for l in out.splitlines() if l.strip() and not l.startswith(";")]
    return "\n".join(lines) + "\n" if any("\tSOA\t" in l for l in lines) else ""


def verify(t, work, text, zone, what):
    """dnssec-verify and ldns-verify-zone of the zone `text`."""
    path = os.path.join(work, "%s-%d.zone" % (zone, int(time.monotonic() * 1000)))
    open(path, "w").write(text)
    r = subprocess.run(["dnssec-verify", "-o", zone, "-z", path], capture_output=True, text=True, timeout=60)
    t.check(r.returncode == 0 and "Zone fully signed" in r.stdout + r.stderr, what + ": dnssec-verify passes",
            (r.stdout + r.stderr)[-800:])
    r = subprocess.run(["ldns-verify-zone", path], capture_output=True, text=True, timeout=60)
    t.check(r.returncode == 0, what + ": ldns-verify-zone passes", (r.stdout + r.stderr)[-800:])
    return path


def serial_of(text):
    m = re.search(r"\tSOA\t\S+ \S+ (\d+) ", text)
    return int(m.group(1)) if m else None


def soa_rrsig_times(text):
    """(expiration, inception) of the SOA's RRSIG in an AXFR."""
    m = re.search(r"\tRRSIG\tSOA \d+ \d+ \d+ (\d+) (\d+) ", text)
    return (m.group(1), m.group(2)) if m else None


def serve_part(t, work):
    key = dnssec_lib.keygen(work, ZONE, "ecdsap256sha256")
    state = os.path.join(work, "state.yaml")
    open(state, "w").write("hosts:\n  fra: {status: up, cpu: 10}\n  iad: {status: up, cpu: 50}\n")
    knot_port = free_port()  # Knot's port goes into the zone's notify list
    config = dnssec_lib.render(work, ZONE, key, "ecdsap256sha256")
    text = open(config).read().replace(
        "    soa: {", '    transfer: {view: current, allow: [127.0.0.1], notify: ["127.0.0.1:%d"]}\n    soa: {' % knot_port,
        1)
    open(config, "w").write(text)
    signed_text = text
    server = GtmeshServer(work, config, state=state).start()
    processes = [server]
    try:
        first = wait_until(lambda: axfr_text(server.host, server.port, ZONE), 10, "the signed AXFR")
        verify(t, work, first, ZONE, "gtmesh serve's AXFR")
        t.check(re.search(r"^www\.example\.com\.\s+30\s+IN\s+A\s+192\.0\.2\.10$", first, re.M) is not None and
                re.search(r"^www\.example\.com\.\s+30\s+IN\s+RRSIG\s+A ", first, re.M) is not None,
                "the fallback view (www in fra) is transferred, signed")
        t.check(len(re.findall(r"\tNSEC\t", first)) >= 15, "an NSEC at every name",
                str(len(re.findall(r"\tNSEC\t", first))))
        # One signature byte changed: the verifier must fail.
        lines = first.splitlines()
        i = next(n for n, l in enumerate(lines) if "\tRRSIG\tA " in l)
        sig = lines[i].split()
        blob = sig[-1]
        sig[-1] = blob[:-6] + ("A" if blob[-6] != "A" else "B") + blob[-5:]
        lines[i] = " ".join(sig)
        bad = os.path.join(work, "tampered.zone")
        open(bad, "w").write("\n".join(lines) + "\n")
        r = subprocess.run(["ldns-verify-zone", bad], capture_output=True, text=True, timeout=60)
        t.check(r.returncode != 0, "the AXFR with one signature byte changed fails ldns-verify-zone",
                (r.stdout + r.stderr)[-300:])

        # 2. Knot pulls it; unbound validates answers Knot gives.
        knot, _, knot_log = start_knot(work, server.port, knot_port)
        processes.append(knot)
        s1 = serial_of(first)
        t.check(wait_for_serial(knot_port, s1, 20), f"Knot pulls serial {s1}", open(knot_log).read()[-1500:])
        ds, dnskey = dnssec_lib.trust_anchor(config, ZONE)
        unbound = dnssec_lib.start_unbound(work, [{"zone": ZONE + ".", "ds": ds, "port": knot_port}])
        processes.append(unbound.proc)
        questions = [("www", "A", "answer"), ("www", "AAAA", "answer"), ("pool", "A", "answer"),
                     ("chain", "A", "answer"), ("x.wild", "A", "answer"), ("a.b.wild", "A", "answer"),
                     ("mail", "MX", "answer"), ("_sip._tcp", "SRV", "answer"), ("app", "A", "answer"),
                     ("nope", "A", "denial"), ("txt", "AAAA", "denial"), ("deep.tree", "A", "denial")]
        dnssec_lib.wait_for(lambda: "NOERROR" in unbound.ask(ZONE + ".", "SOA"), 15)
        for name, qtype, want in questions:
            out = unbound.ask(name + "." + ZONE + ".", qtype)
            ok, why = dnssec_lib.validated(out, want)
            t.check(ok, f"unbound validates {name} {qtype} served by Knot ({want})", why)
        t.equal(answers("127.0.0.1", knot_port, "www.example.com.", "A"),
                answers(server.host, server.port, "www.example.com.", "A"),
                "Knot answers www as gtmesh does (fra healthy: the one address)")

        # 3. fra down: a new serial, Knot follows by NOTIFY within 2 s, and it validates.
        open(state, "w").write("hosts:\n  fra: {status: down, cpu: 10}\n  iad: {status: up, cpu: 50}\n")
        offset = len(server.log_text())
        server.signal(signal.SIGHUP)
        server.wait_log(r"reloaded", offset)
        reloaded_at = time.monotonic()
        second = wait_until(lambda: (lambda x: x if serial_of(x) not in (None, s1) else "")(
            axfr_text(server.host, server.port, ZONE)), 10, "the new signed AXFR")
        s2 = serial_of(second)
        t.check(s2 > s1, f"the serial moves forward after the reload: {s1} -> {s2}")
        verify(t, work, second, ZONE, "the AXFR after fra went down")
        t.check(wait_for_serial(knot_port, s2, 2), f"Knot holds serial {s2} within 2 s (NOTIFY)",
                "after %.2f s" % (time.monotonic() - reloaded_at))
        t.equal(dig("127.0.0.1", knot_port, "www.example.com.", "A", "+short").split(), ["198.51.100.10"],
                "Knot answers www with iad's address")
        anchors = dnssec_lib.delv_anchors(work, ZONE, [dnskey])
        out = dnssec_lib.delv(knot_port, anchors, ZONE, "www." + ZONE, "A")
        t.check("fully validated" in out and "198.51.100.10" in out, "delv asking Knot: www fully validated", out[-600:])
        out = dnssec_lib.delv(knot_port, anchors, ZONE, "nothing-here." + ZONE, "A")
        t.check("negative response, fully validated" in out, "delv asking Knot: a missing name is proven by NSEC",
                out[-600:])

        # Ten more reloads, then a restart: the serial never falls back (it
        # follows the signing time, not the reload count).
        for _ in range(10):
            offset = len(server.log_text())
            server.signal(signal.SIGHUP)
            server.wait_log(r"reloaded", offset)
        before = wait_until(lambda: serial_of(axfr_text(server.host, server.port, ZONE)), 10, "a serial")
        server.stop()
        time.sleep(1.5)  # ten signings ran the serial at most 1 s ahead of the clock (docs/dnssec.md)
        server = GtmeshServer(work, config, state=state, name="gtmesh-restarted").start()
        processes.append(server)
        after = wait_until(lambda: serial_of(axfr_text(server.host, server.port, ZONE)), 10, "a serial")
        t.check(after > before, f"after ten reloads and a restart the serial moves on: {before} -> {after}")

        # dnssec: taken out by a reload: the zone goes out unsigned, its
        # fallback view made from the snapshot again (iad up, then fra back),
        # and its serial does not fall back.
        unsigned_text = re.sub(r"\n    dnssec:\n(      .*\n)+", "\n", open(config).read(), count=1)
        t.check("\n    dnssec:" not in unsigned_text, "the config without dnssec:")
        open(config, "w").write(unsigned_text)
        open(state, "w").write("hosts:\n  fra: {status: up, cpu: 10}\n  iad: {status: up, cpu: 50}\n")
        offset = len(server.log_text())
        server.signal(signal.SIGHUP)
        server.wait_log(r"reloaded", offset)
        plain = wait_until(lambda: axfr_text(server.host, server.port, ZONE), 10, "the unsigned AXFR")
        t.check("\tRRSIG\t" not in plain and "\tNSEC\t" not in plain and
                re.search(r"^www\.example\.com\.\s+30\s+IN\s+A\s+192\.0\.2\.10$", plain, re.M) is not None and
                (serial_of(plain) or 0) >= after,
                "without dnssec: the zone goes out unsigned, www in fra again (not the last signed view), serial "
                f"{serial_of(plain)} not below {after}", plain[:600])
    finally:
        for p in processes:
            if isinstance(p, GtmeshServer):
                p.stop()
            else:
                stop(p)
    # 4. Signed again when refresh has passed, without any change.
    fast = signed_text.replace("validity: 7d", "validity: 1h").replace("refresh: 1d", "refresh: 1m")
    fast_config = os.path.join(work, "fast.yaml")
    open(fast_config, "w").write(fast)
    server = GtmeshServer(work, fast_config, state=state, name="fast")
    try:
        start_under_faketime(server)
        a = wait_until(lambda: axfr_text(server.host, server.port, ZONE), 10, "the first AXFR at 120x")
        b = wait_until(lambda: (lambda x: x if serial_of(x) not in (None, serial_of(a)) else "")(
            axfr_text(server.host, server.port, ZONE)), 10, "a second serial at 120x")
        ta, tb = soa_rrsig_times(a), soa_rrsig_times(b)
        t.check(serial_of(b) > serial_of(a) and ta and tb and tb[1] > ta[1],
                "with nothing changed, refresh (1m, 2 s at 120x) signs the zone again under a higher serial: "
                f"{serial_of(a)} {ta} -> {serial_of(b)} {tb}")
    finally:
        server.stop()


def wait_for_serial(port, serial, seconds, zone=ZONE):
    def at():
        out = dig("127.0.0.1", port, zone, "SOA", "+short", "+time=1", "+tries=1").split()
        return len(out) >= 3 and out[2] == str(serial)
    try:
        wait_until(at, seconds, "serial %s" % serial)
        return True
    except Exception:
        return False


FAKETIME_LIB = "/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1"


def start_under_faketime(server):
    """GtmeshServer.start with libfaketime preloaded into gtmesh itself at
    120x (not under the faketime launcher, whose child would outlive a
    stop), the monotonic clock left real."""
    saved = dict(os.environ)
    os.environ.update(LD_PRELOAD=FAKETIME_LIB, FAKETIME="+0 x120", FAKETIME_DONT_FAKE_MONOTONIC="1")
    try:
        server.start()
    finally:
        os.environ.clear()
        os.environ.update(saved)


def cluster_part(t, work):
    from cluster_helpers import DEMO_NS_LINE, cluster, ctl, decider_addresses, wait_for  # noqa: E402
    zone = "demo.example"
    key = dnssec_lib.keygen(work, zone, "ecdsap256sha256")
    started = False
    processes = []
    try:
        cluster("start", work)
        started = True
        mesh, dns = decider_addresses(work)
        text = open(os.path.join(work, "cluster.yaml")).read()
        anchor = DEMO_NS_LINE
        t.check(anchor in text, "the cluster config has demo.example's ns line")
        knot, knot_port, knot_log = start_knot(work, dns[1][1], zone=zone)
        processes.append(knot)
        pushed = os.path.join(work, "signed.yaml")
        signed_text = text.replace(anchor, anchor + "    dnssec: {key: %s}\n" % key +
                                   '    transfer: {view: current, allow: [127.0.0.1], notify: ["127.0.0.1:%d"]}\n'
                                   % knot_port, 1)
        open(pushed, "w").write(signed_text)
        r = ctl(mesh[1], "push", pushed)
        t.check(r.returncode == 0, "push of demo.example with dnssec: and transfer:", (r.stdout + r.stderr).strip())

        def one_signed_view(www):
            got = {n: axfr_text(dns[n][0], dns[n][1], zone) for n in dns}
            if any(not g for g in got.values()) or len(set(got.values())) != 1:
                return None
            g = got[1]
            if (serial_of(g) or 0) <= 2 or not re.search(r"^www\.demo\.example\.\s+\d+\s+IN\s+A\s+%s$" %
                                                         re.escape(www), g, re.M):
                return None
            return g

        first = wait_for(lambda: one_signed_view("192.0.2.10"), 30, 0.2)
        t.check(first is not None, "every decider transfers the same signed bytes (www in fra) under one serial "
                "above the config version", str({n: axfr_text(dns[n][0], dns[n][1], zone)[:300] for n in dns})
                if first is None else "")
        if not first:
            raise RuntimeError("no signed view to go on from")
        verify(t, work, first, zone, "the deciders' AXFR")
        s1 = serial_of(first)
        r = ctl(mesh[2], "status")
        line = next((l for l in r.stdout.splitlines() if "zone demo.example" in l), "")
        t.check(f"serial {s1}," in line and "records signed for transfer, signatures expire in" in line,
                "gtmeshctl status on decider 2: the zone's serial and when its signatures expire", line or r.stdout[-800:])
        t.check(wait_for_serial(knot_port, s1, 10, zone), f"Knot pulls the signed serial {s1}",
                open(knot_log).read()[-1500:])
        ds, dnskey = dnssec_lib.trust_anchor(pushed, zone)
        anchors = dnssec_lib.delv_anchors(work, zone, [dnskey])
        out = dnssec_lib.delv(knot_port, anchors, zone, "www." + zone, "A")
        t.check("fully validated" in out and "192.0.2.10" in out, "delv asking Knot: www (fra) fully validated",
                out[-600:])
        r = ctl(mesh[2], "drain", "fra")
        t.check(r.returncode == 0, "fra drained", (r.stdout + r.stderr).strip())
        second = wait_for(lambda: one_signed_view("198.51.100.10"), 20, 0.2)
        t.check(second is not None and serial_of(second) > serial_of(first),
                "after the drain every decider transfers one new signed view (www in iad), byte for byte alike, "
                "under a higher serial", "" if second else str({n: serial_of(axfr_text(dns[n][0], dns[n][1], zone))
                                                               for n in dns}))
        if not second:
            raise RuntimeError("no second signed view to go on from")
        verify(t, work, second, zone, "the deciders' AXFR after the drain")
        s2 = serial_of(second)
        t.check(wait_for_serial(knot_port, s2, 2, zone), f"Knot holds serial {s2} within 2 s (NOTIFY)")
        out = dnssec_lib.delv(knot_port, anchors, zone, "www." + zone, "A")
        t.check("fully validated" in out and "198.51.100.10" in out, "delv asking Knot: www (iad) fully validated",
                out[-600:])

        # A push that changes a static record: the zone is signed again for
        # the new config (no decider transfers it unsigned meanwhile, and none
        # announces a serial it cannot transfer), Knot follows.
        old_ns1 = "{name: ns1, type: A, answers: [127.0.0.1]}"
        t.check(old_ns1 in signed_text, "the cluster config has ns1's A record")
        changed = signed_text.replace(old_ns1, old_ns1.replace("127.0.0.1", "192.0.2.199"), 1)
        pushed3 = os.path.join(work, "signed3.yaml")
        open(pushed3, "w").write(changed)
        r = ctl(mesh[1], "push", pushed3)
        t.check(r.returncode == 0, "push of a one-record change", (r.stdout + r.stderr).strip())
        pushed_at = time.monotonic()
        third = wait_for(lambda: (lambda g: g if g and "192.0.2.199" in g else None)(one_signed_view("198.51.100.10")),
                         20, 0.2)
        t.check(third is not None and serial_of(third) > s2,
                "every decider transfers the new config signed, byte for byte alike, under a higher serial")
        if third:
            verify(t, work, third, zone, "the deciders' AXFR after the push")
            s3 = serial_of(third)
            t.check(wait_for_serial(knot_port, s3, 5, zone), f"Knot holds serial {s3} within 5 s of the push",
                    "%.2f s" % (time.monotonic() - pushed_at))
            out = dnssec_lib.delv(knot_port, anchors, zone, "ns1." + zone, "A")
            t.check("fully validated" in out and "192.0.2.199" in out, "delv asking Knot: the changed ns1 fully "
                    "validated", out[-600:])
    finally:
        for p in processes:
            stop(p)
        if started:
            cluster("stop", work, check=False)


def main():
    part = sys.argv[1] if len(sys.argv) > 1 else "serve"
    t = Checks("dns_transfers_signed" + ("" if part == "serve" else "_cluster"))
    for tool in ("dnssec-verify", "ldns-verify-zone", "knotd", "unbound", "delv"):
        if not shutil.which(tool):
            t.check(False, tool + " is installed (tools/setup.sh installs it)")
            t.finish()
    if not os.path.exists(FAKETIME_LIB):
        t.check(False, FAKETIME_LIB + " is installed (faketime; tools/setup.sh installs it)")
        t.finish()
    work = tempfile.mkdtemp(prefix="gtmesh-xfr-signed-")
    try:
        (serve_part if part == "serve" else cluster_part)(t, work)
    except Exception as e:  # a step that could not go on: the checks so far, and why
        t.check(False, "the test ran to its end", repr(e))
    finally:
        if t.failed:
            print("kept " + work)
        else:
            shutil.rmtree(work, ignore_errors=True)
    t.finish()


if __name__ == "__main__":
    main()
