#!/usr/bin/python3
"""System test: a DNSSEC key rollover by pre-publication, step by step as
docs/dnssec.md and `gtmeshctl dnssec rollover-plan` give it, each step a
config reload (SIGHUP) of a running `gtmesh serve`, judged by unbound (a
validating resolver that keeps its DNSKEY cache across the steps) and by
BIND's delv.

  roll.example  key A -> publish B -> sign with B, publish A -> B alone.
                Every step validates; after the swap every new answer
                carries B's key tag.
  jump.example  the control: key C swapped for D in one step, with no
                pre-publication. unbound still holds the DNSKEY set {C}
                (TTL 1h), so the new answers are bogus (SERVFAIL): the
                failure pre-publication exists to prevent.

The validators hold the DS of both keys of each zone from the start, as the
parent does once step 2 is done; until the swap nothing is signed with the
second key, so that changes no answer before it.
"""

import base64
import os
import re
import shutil
import signal
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "dns_lib"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gtmesh_dns import Checks, GtmeshServer, dig, status_of  # noqa: E402
from dnssec_lib import (GTMESHCTL, delv, delv_anchors, keygen, render, run, start_unbound,  # noqa: E402
                        validated, wait_for)

ALG = "ecdsap256sha256"
ROLL_TTL = 3  # roll.example's DNSKEY TTL: "wait the DNSKEY TTL" takes seconds here


def key_tag(flags, protocol, algorithm, key_b64):
    """RFC 4034 appendix B, written out here from the RFC."""
    rdata = bytes([flags >> 8, flags & 0xff, protocol, algorithm]) + base64.b64decode(key_b64)
    ac = sum(b << 8 if i % 2 == 0 else b for i, b in enumerate(rdata))
    return (ac + (ac >> 16)) & 0xffff


def tags_in(out, rrtype):
    """Key tags of the DNSKEYs (rrtype DNSKEY) or of the RRSIGs over `rrtype` in dig output."""
    if rrtype == "DNSKEY":
        return sorted(key_tag(int(m.group(1)), int(m.group(2)), int(m.group(3)), m.group(4).replace(" ", ""))
                      for m in re.finditer(r"\tDNSKEY\t(\d+) (\d+) (\d+) ([A-Za-z0-9+/= ]+)$", out, re.M))
    return sorted(int(m.group(1)) for m in
                  re.finditer(r"\tRRSIG\t%s \d+ \d+ \d+ \d+ \d+ (\d+) " % rrtype, out))


def tag_of(key_path):
    return int(re.search(r"\+(\d+)\.pem$", key_path).group(1))


class Zone:
    def __init__(self, workdir, zone, ttl):
        self.workdir, self.zone, self.ttl = workdir, zone, ttl
        self.server = None
        self.steps = 0

    def configure(self, key, publish=()):
        """Writes the zone's config (the same file each time: a push of a new version)."""
        return render(self.workdir, self.zone, key, ALG, publish=publish, soa_ttl=self.ttl, name=self.zone)

    def reload(self, key, publish=()):
        """One step: the new config, SIGHUP, and the server's word that it serves it."""
        self.configure(key, publish)
        offset = len(self.server.log_text())
        self.server.signal(signal.SIGHUP)
        self.server.wait_log(r"reloaded \S+ \(generation \d+\)", offset)


def main():
    missing = [b for b in ("dig", "delv", "unbound") if not shutil.which(b)]
    if missing:
        print("skip: missing " + ", ".join(missing))
        return 77
    t = Checks("dnssec.rollover")
    workdir = tempfile.mkdtemp(prefix="gtmesh-rollover-")
    roll = Zone(workdir, "roll.example", ROLL_TTL)
    jump = Zone(workdir, "jump.example", 3600)
    unbound = None
    try:
        a, b = keygen(workdir, "roll.example.", ALG), keygen(workdir + "/new", "roll.example.", ALG)
        c, d = keygen(workdir, "jump.example.", ALG), keygen(workdir + "/new", "jump.example.", ALG)
        anchors = []
        for z, keys in ((roll, (a, b)), (jump, (c, d))):
            # Both keys' DS and DNSKEY lines, from gtmeshctl dnssec ds on a
            # config that publishes both (what the parent holds after step 2).
            both = render(workdir, z.zone, keys[0], ALG, publish=[keys[1]], name=z.zone + "-both")
            out = run([GTMESHCTL, "dnssec", "ds", z.zone + ".", "--config", both]).stdout
            z.ds = [l for l in out.splitlines() if " IN DS " in l]
            z.dnskeys = [l for l in out.splitlines() if " IN DNSKEY " in l and not l.startswith(";")]
            t.check(len(z.ds) == 2 and len(z.dnskeys) == 2, f"gtmeshctl dnssec ds prints both keys of {z.zone}",
                    out)
            z.server = GtmeshServer(workdir, z.configure(keys[0]), extra=["--udp-threads", "1"],
                                    name="serve-" + z.zone).start()
            z.anchors = delv_anchors(workdir, z.zone + ".", z.dnskeys)
            anchors += [{"zone": z.zone + ".", "port": z.server.port, "ds": ds} for ds in z.ds]

        plan = run([GTMESHCTL, "dnssec", "rollover-plan", "roll.example", "--config", roll.configure(a)]).stdout
        t.check("signing key tag %d" % tag_of(a) in plan and "DNSKEY TTL %ds" % ROLL_TTL in plan and
                "dnssec.publish" in plan, "rollover-plan names the signing key and the zone's own DNSKEY TTL",
                plan[:300])

        # unbound takes every DS line of both zones as a trust anchor.
        unbound = start_unbound(workdir, anchors)
        up = wait_for(lambda: unbound.proc.poll() is None and
                      status_of(unbound.ask("roll.example", "SOA")) == "NOERROR", 20)
        if not t.check(bool(up), f"unbound answers on 127.0.0.1:{unbound.port}", open(unbound.log).read()[-500:]):
            return t.finish()

        fresh = iter(range(1, 1000))

        def step_ok(z, signing_tag, what):
            """A never-asked name (a wildcard answer, so nothing is cached)
            and the apex SOA validate in unbound and delv, signed by `signing_tag`."""
            name = "n%d.wild.%s" % (next(fresh), z.zone)
            out = unbound.ask(name, "A")
            ok, why = validated(out, "answer")
            tags = tags_in(out, "A")
            t.check(ok and tags == [signing_tag], f"{what}: unbound validates a new answer signed by key tag "
                    f"{signing_tag}", f"{why}; RRSIG key tags {tags}")
            v = delv(z.server.port, z.anchors, z.zone + ".", "www." + z.zone, "A")
            t.check("fully validated" in v, f"{what}: delv fully validates", v.strip()[:300])

        def dnskey_tags_seen(z, want):
            """Polls unbound until its DNSKEY answer for the zone holds `want`
            (it re-fetches the set once its TTL, ROLL_TTL here, runs out)."""
            seen = wait_for(lambda: tags_in(unbound.ask(z.zone, "DNSKEY"), "DNSKEY") == sorted(want),
                            4 * z.ttl + 10)
            t.check(bool(seen), f"unbound sees the DNSKEY set {sorted(want)} of {z.zone}",
                    str(tags_in(unbound.ask(z.zone, "DNSKEY"), "DNSKEY")))

        ta, tb, tc, td = (tag_of(k) for k in (a, b, c, d))
        # Step 0: A signs.
        step_ok(roll, ta, "roll.example, before the rollover")
        dnskey_tags_seen(roll, [ta])
        # Step 1: B is published; A still signs.
        roll.reload(a, publish=[b])
        direct = dig("127.0.0.1", roll.server.port, "roll.example", "DNSKEY", "+dnssec")
        t.check(tags_in(direct, "DNSKEY") == sorted([ta, tb]) and re.search(r"\tRRSIG\tDNSKEY 13 2 %d \d+ \d+ %d "
                                                                              % (ROLL_TTL, ta), direct),
                "step 1: the DNSKEY set holds both keys, signed by A", direct[-400:])
        dnskey_tags_seen(roll, [ta, tb])  # step 2's wait: the DNSKEY TTL
        step_ok(roll, ta, "step 1 (B published)")
        # Step 3: the swap. unbound's cached DNSKEY set already holds B.
        roll.reload(b, publish=[a])
        step_ok(roll, tb, "step 3 (B signs, A published)")
        # Step 5: A leaves the DNSKEY set.
        roll.reload(b)
        dnskey_tags_seen(roll, [tb])
        step_ok(roll, tb, "step 5 (B alone)")

        # The control: C is swapped for D at once while unbound holds {C}.
        step_ok(jump, tc, "jump.example, before its swap")
        jump.reload(d)
        direct = dig("127.0.0.1", jump.server.port, "n1.wild.jump.example", "A", "+dnssec")
        t.check(tags_in(direct, "A") == [td], "jump.example: after the swap the server signs with D alone",
                direct[-300:])
        out = unbound.ask("n%d.wild.jump.example" % next(fresh), "A")
        t.check(status_of(out) == "SERVFAIL",
                "jump.example: without pre-publication unbound, holding the DNSKEY set {C}, calls the answer "
                "signed by D bogus", status_of(out))
    finally:
        if unbound and unbound.proc.poll() is None:
            unbound.proc.terminate()
            unbound.proc.wait(10)
        for z in (roll, jump):
            if z.server:
                z.server.stop()
    if t.failed:
        print("kept " + workdir)
    else:
        shutil.rmtree(workdir, ignore_errors=True)
    t.finish()


if __name__ == "__main__":
    sys.exit(main() or 0)
