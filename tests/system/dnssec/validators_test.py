#!/usr/bin/python3
"""System test: gtmesh's online DNSSEC signing (docs/dnssec.md) judged by
real validators, not by our own code: unbound, BIND's delv, PowerDNS
Recursor and Knot Resolver, each given the zone's trust anchor as
`gtmeshctl dnssec ds` prints it.

Four `gtmesh serve` on loopback, each with the shipped example
configs/examples/dnssec.yaml under another zone name and key:
  example.com   ECDSA P-256 (13)  every record kind must validate (AD)
  ed.example    Ed25519 (15)      the same
  bad.example   signed with a key the validators were not given: bogus
  old.example   served 30 days in the past (faketime): signatures expired
  bind.example  a BIND key file (dnssec-keygen, a ZSK of flags 256): validates
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "dns_lib"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gtmesh_dns import Checks, GtmeshServer, dig, kdig, rdata, status_of  # noqa: E402
from dnssec_lib import (bind_keygen, delv, delv_anchors, keygen, render, run, start_kresd, start_pdns_recursor,  # noqa: E402
                        start_unbound, trust_anchor, validated, wait_for)

FAKETIME_LIB = "/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1"

# (name, type, what must come back): "answer" (a validated answer), "nodata"
# (a validated empty answer: NODATA or a compact NXDOMAIN).
QUERIES = [
    ("www", "A", "answer"),            # DC mode (no measurements here: the fail-safe / fail-open answer)
    ("www", "AAAA", "answer"),         # plain
    ("alias", "A", "answer"),          # CNAME followed in the zone
    ("chain", "A", "answer"),          # CNAME -> CNAME -> A
    ("app", "A", "answer"),            # priority profile
    ("canary", "A", "answer"),         # weighted profile
    ("global", "A", "answer"),         # performance profile with a nested weighted one
    ("legacy", "A", "answer"),         # static rules
    ("x1.wild", "A", "answer"),        # wildcard (RFC 4592): RRSIG labels 3 and a covering NSEC
    ("a.b.wild", "A", "answer"),       # two labels below the encloser
    ("Mixed.Case.WILD", "A", "answer"),
    ("edge.cdn", "A", "answer"),       # a wildcard CNAME, then the DC-mode answer
    ("host.deep.tree", "A", "answer"),
    ("mail", "MX", "answer"),
    ("txt", "TXT", "answer"),
    ("pool", "A", "answer"),           # an RRset of three, not in canonical order in the config
    ("_sip._tcp", "SRV", "answer"),
    ("", "SOA", "answer"),
    ("", "NS", "answer"),
    ("", "DNSKEY", "answer"),
    ("retired", "A", "nodata"),        # disabled profile: dynamic NODATA
    ("www", "MX", "nodata"),           # NODATA
    ("tree.deep", "A", "nodata"),      # empty non-terminal
    ("x1.wild", "TXT", "nodata"),      # NODATA at a wildcard
    ("nope", "A", "nodata"),           # NXDOMAIN, compact denial
    ("a.b.nope", "AAAA", "nodata"),
]


def main():
    missing = [b for b in ("dig", "delv", "unbound", "pdns_recursor", "kresd", "dnssec-keygen", "dnssec-dsfromkey")
               if not shutil.which(b)]
    if not os.path.exists(FAKETIME_LIB):
        missing.append(FAKETIME_LIB)
    if missing:
        print("skip: missing " + ", ".join(missing))
        return 77
    t = Checks("dnssec.validators")
    workdir = tempfile.mkdtemp(prefix="gtmesh-dnssec-")
    servers, validators = [], []
    try:
        zones = []
        for zone, alg, fake in (("example.com.", "ecdsap256sha256", None), ("ed.example.", "ed25519", None),
                                ("bad.example.", "ecdsap256sha256", None), ("old.example.", "ecdsap256sha256", "-30d"),
                                ("bind.example.", "ecdsap256sha256", None)):
            key = bind_keygen(workdir, zone) if zone == "bind.example." else keygen(workdir, zone, alg)
            config = render(workdir, zone.rstrip("."), key, alg)
            ds, dnskey = trust_anchor(config, zone)
            if zone == "bind.example.":
                bind_ds = run(["dnssec-dsfromkey", "-2", key[:-len(".private")] + ".key"]).stdout.strip()
                t.check(bind_ds.lower() == ds.lower() and " 256 3 13 " in dnskey,
                        "a BIND K*.private key: gtmeshctl dnssec ds prints what dnssec-dsfromkey does, flags 256 kept",
                        f"{ds} vs {bind_ds}")
            if zone == "bad.example.":
                # The validators get another key's anchor: what is served cannot chain to it.
                text = open(config).read().replace("key: " + key, "key: " + keygen(workdir, "bad2.example.", alg))
                open(config, "w").write(text)
            s = GtmeshServer(workdir, config, extra=["--udp-threads", "1"], name="serve-" + zone.rstrip("."))
            if fake:
                # libfaketime preloaded into gtmesh itself (not under the
                # faketime launcher), so that stopping it stops the server.
                saved = dict(os.environ)
                os.environ.update(LD_PRELOAD=FAKETIME_LIB, FAKETIME=fake, FAKETIME_DONT_FAKE_MONOTONIC="1")
                try:
                    s.start()
                finally:
                    os.environ.clear()
                    os.environ.update(saved)
            else:
                s.start()
            servers.append(s)
            zones.append({"zone": zone, "port": s.port, "ds": ds, "dnskey": dnskey, "config": config})
        t.check(True, "5 gtmesh serve signing the shipped example under 5 zone names (keys by gtmeshctl dnssec "
                "keygen, one by BIND's dnssec-keygen)")

        # The unsigned view stays what it was: DO=0 carries no DNSSEC record.
        plain = dig("127.0.0.1", servers[0].port, "www.example.com", "A")
        signed = dig("127.0.0.1", servers[0].port, "www.example.com", "A", "+dnssec")
        t.check("RRSIG" not in plain and "RRSIG\tA 13 3 30" in signed,
                "DO=0 answers carry no RRSIG; DO=1 answers carry one of algorithm 13, 3 labels, TTL 30")
        nx = dig("127.0.0.1", servers[0].port, "nope.example.com", "A", "+dnssec")
        t.check(status_of(nx) == "NOERROR" and "NXNAME" in nx.replace("TYPE128", "NXNAME") and
                status_of(dig("127.0.0.1", servers[0].port, "nope.example.com", "A")) == "NXDOMAIN",
                "NXDOMAIN with DO=1 is a compact denial (NOERROR, NSEC with NXNAME); with DO=0 it stays NXDOMAIN")

        # kdig (Knot's parser, not dig's) reads every signed shape without complaint.
        bad = []
        for qname, qtype in (("pool.example.com", "A"), ("a.b.wild.example.com", "A"), ("nope.example.com", "A"),
                             ("example.com", "DNSKEY"), ("chain.example.com", "A")):
            k = kdig("127.0.0.1", servers[0].port, "+dnssec", qname, qtype)
            if "RRSIG" not in k or "NOERROR" not in k or "WARNING" in k or "malformed" in k.lower():
                bad.append(f"{qname} {qtype}: {k.strip()[-200:]}")
        t.check(not bad, "kdig +dnssec parses the signed answers, denials and DNSKEY set", "; ".join(bad[:2]))

        # A wildcard's answer is signed as the wildcard (RRSIG labels 3 for
        # *.wild.example.com, RFC 4035 5.3.2) with an NSEC covering the next
        # closer name b.wild.example.com and everything below it.
        wild = dig("127.0.0.1", servers[0].port, "a.b.wild.example.com", "A", "+dnssec")
        cover = re.search(r"^(\S+)\s+\d+\s+IN\s+NSEC\s+(\S+) RRSIG NSEC$", wild, re.M)
        t.check("RRSIG\tA 13 3 60" in wild and cover and cover.group(2) == "b\\000.wild.example.com." and
                cover.group(1).startswith("a\\255") and cover.group(1).endswith(".wild.example.com."),
                "a wildcard answer: RRSIG with the wildcard's 3 labels, NSEC from just before the next closer name "
                "to b\\000.wild.example.com", wild[-600:])
        ex = run([os.environ.get("GTMESH_BIN", "gtmesh"), "explain", "--config", zones[0]["config"],
                  "a.b.wild.example.com", "A", "--dnssec"]).stdout
        claimed = re.search(r"NSEC (\S+) -> (\S+) \[RRSIG NSEC\]", ex)
        t.check(cover and claimed and claimed.groups() == cover.groups() and "(labels 3," in ex,
                "gtmesh explain --dnssec names the wildcard's label count and the covering NSEC the server sends",
                ex.strip()[-300:])

        # gtmesh explain --dnssec says what a DO=1 answer carries: the NSEC
        # types it prints are the ones the server sends.
        gtmesh = os.environ.get("GTMESH_BIN", "gtmesh")
        for qname, qtype in (("www.example.com", "MX"), ("nope.example.com", "A"), ("example.com", "TXT")):
            ex = run([gtmesh, "explain", "--config", zones[0]["config"], qname, qtype, "--dnssec"]).stdout
            claimed = re.search(r"NSEC \S+ -> \S+ \[([A-Z0-9 ]+)\]", ex)
            sent = re.search(r"\tNSEC\t\S+ ([A-Z0-9 ]+)\n",
                             dig("127.0.0.1", servers[0].port, qname, qtype, "+dnssec").replace("TYPE128", "NXNAME"))
            t.check(claimed and sent and sorted(claimed.group(1).split()) == sorted(sent.group(1).split()) and
                    "key tag %s" % zones[0]["ds"].split()[3] in ex,
                    "gtmesh explain --dnssec %s %s names the key tag and the NSEC types the server sends: %s"
                    % (qname, qtype, claimed.group(1) if claimed else ex.strip()[-200:]),
                    sent.group(1) if sent else "no NSEC sent")
        ex = run([gtmesh, "explain", "--config", zones[0]["config"], "alias.example.com", "A", "--dnssec"]).stdout
        t.check("RRSIG CNAME over the 1 answer record(s) (labels 3, original TTL 60" in ex,
                "gtmesh explain --dnssec names the RRSIG of an answer", ex.strip()[-200:])

        good = [z for z in zones if z["zone"] in ("example.com.", "ed.example.", "bind.example.")]
        # delv (BIND's validator) against each server directly.
        for z in zones:
            z["anchors"] = delv_anchors(workdir, z["zone"], [z["dnskey"]])
        for z in good:
            bad = []
            for name, qtype, want in QUERIES:
                qname = (name + "." if name else "") + z["zone"]
                out = delv(z["port"], z["anchors"], z["zone"], qname, qtype)
                if "fully validated" not in out:
                    bad.append(f"{qname} {qtype}: {out.strip().splitlines()[:2]}")
            t.check(not bad, f"delv: all {len(QUERIES)} questions of {z['zone']} fully validated", "; ".join(bad[:3]))
        for z in zones:
            if z in good:
                continue
            out = delv(z["port"], z["anchors"], z["zone"], "www." + z["zone"], "A")
            t.check("fully validated" not in out and "resolution failed" in out,
                    f"delv: {z['zone']} ({'wrong key' if z['zone'].startswith('bad') else 'expired'}) is refused",
                    out.strip()[:200])

        validators = [start_unbound(workdir, zones), start_pdns_recursor(workdir, zones), start_kresd(workdir, zones)]
        for v in validators:
            up = wait_for(lambda: v.proc.poll() is None and status_of(v.ask("example.com", "SOA")) == "NOERROR", 20)
            t.check(bool(up), f"{v.name} answers on 127.0.0.1:{v.port}", open(v.log).read()[-500:])
            if not up:
                continue
            for z in good:
                bad = []
                for name, qtype, want in QUERIES:
                    qname = (name + "." if name else "") + z["zone"]
                    ok, why = validated(v.ask(qname, qtype), want)
                    if not ok:
                        bad.append(f"{qname} {qtype}: {why}")
                t.check(not bad, f"{v.name}: all {len(QUERIES)} questions of {z['zone']} validate (AD)",
                        "; ".join(bad[:3]))
            for z in zones:
                if z in good:
                    continue
                out = v.ask("www." + z["zone"], "A")
                t.check(status_of(out) == "SERVFAIL" and not rdata(out),
                        f"{v.name}: {z['zone']} ({'wrong key' if z['zone'].startswith('bad') else 'expired'}) is "
                        f"SERVFAIL", f"{status_of(out)} {rdata(out)}")

        c = servers[0].counters()
        t.check(c.get("dnssec_signed", 0) > 0 and c.get("rrsig_made", 0) > 0 and c.get("rrsig_cache_hits", 0) > 0
                and c.get("rrsig_failures", 1) == 0,
                "the signer counts: signed responses %s, made %s, cache hits %s, failures %s"
                % (c.get("dnssec_signed"), c.get("rrsig_made"), c.get("rrsig_cache_hits"), c.get("rrsig_failures")))
        buckets = sum(c.get(k, 0) for k in c if k.startswith("rrsig_sign_le_"))
        t.check(c.get("rrsig_sign_ns", 0) > 0 and 0 < buckets <= c.get("rrsig_made", 0),
                "the signing-time histogram: %s of %s signatures within 1 ms, %.1f us each on average"
                % (buckets, c.get("rrsig_made"), c.get("rrsig_sign_ns", 0) / 1000 / max(1, c.get("rrsig_made", 1))))
    finally:
        for v in validators:
            if v.proc.poll() is None:
                v.proc.terminate()
                try:
                    v.proc.wait(10)
                except subprocess.TimeoutExpired:
                    v.proc.kill()
        for s in servers:
            s.stop()
    if t.failed:
        print("kept " + workdir)
    else:
        shutil.rmtree(workdir, ignore_errors=True)
    t.finish()


if __name__ == "__main__":
    sys.exit(main() or 0)
