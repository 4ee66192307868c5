#!/usr/bin/python3
"""System test: the static part of a signed zone, as gtmesh's signer signs
it (`gtmeshctl dnssec dump-static`: plain records, SOA, NS, DNSKEY, their
RRSIGs and a full NSEC chain, in RFC 3597 generic form), checked offline by
BIND's dnssec-verify and by ldns-verify-zone, for a P-256 key, an Ed25519
key and a BIND K*.private key. A dump with one signature byte changed must
fail both, so the check can fail.
"""

import os
import re
import shutil
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "dns_lib"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gtmesh_dns import Checks  # noqa: E402
from dnssec_lib import GTMESHCTL, bind_keygen, keygen, render, run  # noqa: E402


def verify(path, zone):
    """(dnssec-verify's verdict, ldns-verify-zone's verdict, their output)."""
    # -z: a combined signing key (SEP flag) signs everything, as gtmesh does.
    b = run(["dnssec-verify", "-z", "-o", zone, path])
    ldns = run(["ldns-verify-zone", path])
    return (b.returncode == 0 and "Zone fully signed" in b.stdout + b.stderr,
            ldns.returncode == 0 and "Zone is verified and complete" in ldns.stdout + ldns.stderr,
            (b.stdout + b.stderr)[-300:] + " | " + (ldns.stdout + ldns.stderr)[-300:])


def main():
    missing = [b for b in ("dnssec-verify", "ldns-verify-zone", "dnssec-keygen") if not shutil.which(b)]
    if missing:
        print("skip: missing " + ", ".join(missing))
        return 77
    t = Checks("dnssec.verify_zone")
    workdir = tempfile.mkdtemp(prefix="gtmesh-verify-zone-")
    for zone, alg, make in (("example.com", "ecdsap256sha256", keygen), ("ed.example", "ed25519", keygen),
                            ("bind.example", "ecdsap256sha256", None)):
        key = bind_keygen(workdir, zone + ".") if make is None else make(workdir, zone + ".", alg)
        config = render(workdir, zone, key, alg)
        r = run([GTMESHCTL, "dnssec", "dump-static", zone, "--config", config])
        if not t.check(r.returncode == 0, f"gtmeshctl dnssec dump-static {zone}", r.stderr):
            continue
        dump = os.path.join(workdir, zone + ".zone")
        open(dump, "w").write(r.stdout)
        rrsigs = len(re.findall(r" IN TYPE46 ", r.stdout))
        nsecs = len(re.findall(r" IN TYPE47 ", r.stdout))
        bind_ok, ldns_ok, why = verify(dump, zone)
        t.check(bind_ok and ldns_ok and rrsigs > 10 and nsecs > 5,
                f"{zone} ({alg}{', a BIND key' if make is None else ''}): {rrsigs} RRSIGs and {nsecs} NSECs, "
                "verified by dnssec-verify and ldns-verify-zone", why)
        # One signature byte changed: both must refuse it.
        lines = r.stdout.splitlines()
        at = next(i for i, l in enumerate(lines) if " IN TYPE46 " in l)
        last = lines[at][-1]
        lines[at] = lines[at][:-1] + ("0" if last != "0" else "1")
        tampered = os.path.join(workdir, zone + "-tampered.zone")
        open(tampered, "w").write("\n".join(lines) + "\n")
        bind_ok, ldns_ok, why = verify(tampered, zone)
        t.check(not bind_ok and not ldns_ok, f"{zone}: a dump with one signature byte changed fails both", why)
    if t.failed:
        print("kept " + workdir)
    else:
        shutil.rmtree(workdir, ignore_errors=True)
    t.finish()


if __name__ == "__main__":
    sys.exit(main() or 0)
