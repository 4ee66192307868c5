"""What the DNSSEC system tests share: keys made by gtmeshctl or BIND's
dnssec-keygen, the shipped example config under another zone name, trust
anchors from `gtmeshctl dnssec ds`, and the four validating resolvers
(unbound, BIND's delv, PowerDNS Recursor, Knot Resolver) started on
loopback with those anchors, each forwarding its zones to gtmesh."""

import os
import re
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "dns_lib"))
from gtmesh_dns import _die_with_parent, dig, flags_of, free_port, rdata, status_of  # noqa: E402

SRC = os.environ.get("GTMESH_SOURCE_DIR", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))
BIN = os.environ.get("GTMESH_BINARY_DIR", os.path.join(SRC, "build"))
GTMESHCTL = os.path.join(BIN, "tools", "gtmeshctl")
EXAMPLE = os.path.join(SRC, "configs", "examples", "dnssec.yaml")


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=60, **kw)


def keygen(workdir, zone, algorithm):
    d = os.path.join(workdir, "keys-" + zone)
    r = run([GTMESHCTL, "dnssec", "keygen", zone, "--algorithm", algorithm, "--dir", d])
    if r.returncode != 0:
        raise RuntimeError("keygen: " + r.stderr)
    return re.search(r"^wrote (\S+)", r.stdout, re.M).group(1)


def bind_keygen(workdir, zone):
    """A BIND K*.private key (dnssec-keygen, ECDSA P-256, a ZSK: flags 256)."""
    d = os.path.join(workdir, "keys-" + zone)
    os.makedirs(d)
    r = run(["dnssec-keygen", "-q", "-K", d, "-a", "ECDSAP256SHA256", zone])
    if r.returncode != 0:
        raise RuntimeError("dnssec-keygen: " + r.stderr)
    return os.path.join(d, r.stdout.strip() + ".private")


def render(workdir, zone, key, algorithm, publish=(), soa_ttl=None, name=None):
    """configs/examples/dnssec.yaml for `zone`, signed with `key`; `publish`
    keys only in the DNSKEY set; `soa_ttl` the SOA's (and DNSKEY set's) TTL."""
    text = open(EXAMPLE).read().replace("example.com", zone)
    published = ("\n      publish: [%s]" % ", ".join(publish)) if publish else ""
    text = re.sub(r"key: \S+", lambda m: "key: " + key + published, text, count=1)
    text = text.replace("algorithm: ecdsap256sha256", "algorithm: " + algorithm, 1)
    if soa_ttl is not None:
        text = text.replace("soa: {", "soa: {ttl: %d, " % soa_ttl, 1)
    path = os.path.join(workdir, (name or zone) + ".yaml")
    open(path, "w").write(text)
    return path


def trust_anchor(config, zone):
    r = run([GTMESHCTL, "dnssec", "ds", zone, "--config", config])
    if r.returncode != 0:
        raise RuntimeError("dnssec ds: " + r.stderr)
    ds = [l for l in r.stdout.splitlines() if " IN DS " in l][0]
    dnskey = [l for l in r.stdout.splitlines() if " IN DNSKEY " in l and not l.startswith(";")][0]
    return ds, dnskey


def wait_for(fn, seconds):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        v = fn()
        if v:
            return v
        time.sleep(0.1)
    return fn()


class Validator:
    def __init__(self, name, proc, port, log):
        self.name, self.proc, self.port, self.log = name, proc, port, log

    def ask(self, qname, qtype):
        return dig("127.0.0.1", self.port, qname, qtype, "+rec", "+dnssec", "+time=3", "+tries=2")


def start_unbound(workdir, zones):
    port = free_port()
    conf = os.path.join(workdir, "unbound.conf")
    lines = ["server:", "  interface: 127.0.0.1", f"  port: {port}", "  do-ip6: no", "  do-daemonize: no",
             '  username: ""', '  chroot: ""', f'  directory: "{workdir}"', f'  pidfile: "{workdir}/unbound.pid"',
             "  use-syslog: no", '  logfile: ""', "  verbosity: 1", "  val-log-level: 2", "  num-threads: 1",
             "  access-control: 127.0.0.0/8 allow", "  do-not-query-localhost: no", "  qname-minimisation: no",
             '  module-config: "validator iterator"', '  local-zone: "example." nodefault']
    for z in zones:
        lines.append(f'  trust-anchor: "{z["ds"]}"')
    for z in zones:
        lines += ["stub-zone:", f'  name: "{z["zone"]}"', f'  stub-addr: 127.0.0.1@{z["port"]}']
    lines += ["remote-control:", "  control-enable: no"]
    open(conf, "w").write("\n".join(lines) + "\n")
    log = os.path.join(workdir, "unbound.log")
    proc = subprocess.Popen(["unbound", "-d", "-c", conf], stdout=open(log, "w"), stderr=subprocess.STDOUT,
                            preexec_fn=_die_with_parent)
    return Validator("unbound", proc, port, log)


def start_pdns_recursor(workdir, zones):
    port = free_port()
    d = os.path.join(workdir, "pdns")
    os.makedirs(d)
    lua = os.path.join(d, "recursor.lua")
    open(lua, "w").write("".join("addTA('%s', '%s')\n" % (z["zone"], z["ds"].split(" IN DS ")[1]) for z in zones))
    forwards = ",".join("%s=127.0.0.1:%d" % (z["zone"].rstrip("."), z["port"]) for z in zones)
    open(os.path.join(d, "recursor.conf"), "w").write(
        f"local-address=127.0.0.1\nlocal-port={port}\nforward-zones={forwards}\ndnssec=validate\n"
        f"lua-config-file={lua}\nsocket-dir={d}\ndaemon=no\nwrite-pid=no\ndont-query=\nallow-from=127.0.0.0/8\n"
        "threads=1\nquiet=yes\nloglevel=4\n")
    log = os.path.join(workdir, "pdns-recursor.log")
    proc = subprocess.Popen(["pdns_recursor", "--config-dir=" + d], stdout=open(log, "w"), stderr=subprocess.STDOUT,
                            preexec_fn=_die_with_parent)
    return Validator("pdns-recursor", proc, port, log)


def start_kresd(workdir, zones):
    port = free_port()
    d = os.path.join(workdir, "kresd")
    os.makedirs(d)
    conf = os.path.join(d, "kresd.conf")
    lines = [f"net.listen('127.0.0.1', {port}, {{ kind = 'dns' }})", "trust_anchors.remove('.')",
             "cache.size = 10 * MB"]
    for z in zones:
        lines.append("trust_anchors.add('%s')" % z["ds"])
        lines.append("policy.add(policy.suffix(policy.FORWARD({'127.0.0.1@%d'}), {todname('%s')}))"
                     % (z["port"], z["zone"]))
    open(conf, "w").write("\n".join(lines) + "\n")
    log = os.path.join(workdir, "kresd.log")
    proc = subprocess.Popen(["kresd", "-n", "-q", "-c", conf, d], stdout=open(log, "w"), stderr=subprocess.STDOUT,
                            preexec_fn=_die_with_parent)
    return Validator("knot-resolver", proc, port, log)


def validated(out, want):
    """(ok, why): AD set, NOERROR (or NXDOMAIN for a compact denial a
    resolver turned back, RFC 9824 5), answers present or absent."""
    status, flags, answers = status_of(out), flags_of(out), rdata(out)
    if "ad" not in flags:
        return False, f"no AD ({status}, flags {flags})"
    if want == "answer":
        return (status == "NOERROR" and len(answers) > 0), f"{status} {answers[:2]}"
    return (status in ("NOERROR", "NXDOMAIN") and not [a for a in answers if not a.startswith(("RRSIG", "CNAME"))],
            f"{status} {answers[:2]}")


def delv_anchors(workdir, zone, dnskeys):
    """A delv trust-anchors file holding the DNSKEY lines `dnskeys` of `zone`."""
    path = os.path.join(workdir, "anchors-" + zone + "conf")
    lines = []
    for line in dnskeys:
        key = line.split()
        lines.append('  %s static-key %s %s %s "%s";' % (zone, key[4], key[5], key[6], "".join(key[7:])))
    open(path, "w").write("trust-anchors {\n" + "\n".join(lines) + "\n};\n")
    return path


def delv(port, anchors, zone, qname, qtype):
    r = run(["delv", "@127.0.0.1", "-p", str(port), "-a", anchors, "+root=" + zone, qname, qtype])
    return r.stdout + r.stderr
