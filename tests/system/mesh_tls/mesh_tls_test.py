#!/usr/bin/env python3
"""Mutual TLS on every mesh link: a cluster whose CA and role certificates
come from `gtmeshctl ca`, agents and deciders talking over the mesh
transport. A node with a certificate of the cluster CA gets in; one without
a certificate, or with one from another CA, is refused at the handshake.
(Roles are checked by tests/system/control_plane.)"""
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

SRC = os.environ.get("GTMESH_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", "..", ".."))
GTMESH = os.environ.get("GTMESH_BIN", os.path.join(SRC, "build", "tools", "gtmesh"))
GTMESHCTL = os.path.join(os.path.dirname(GTMESH), "gtmeshctl")
CLUSTER = os.path.join(SRC, "tools", "cluster.sh")
failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    if not ok:
        failures.append(what)


def dig(server, name):
    host, port = server.rsplit(":", 1)
    out = subprocess.run(["dig", "@" + host, "-p", port, name, "+short", "+time=1", "+tries=1"],
                         capture_output=True, text=True, timeout=10)
    return out.stdout.split()


def enroll_checks(work, env, tls, other):
    """gtmeshctl enroll (docs/deploy.md) on this machine, into a scratch
    /etc: it writes only after a decider gave the config to the agent
    certificate of that DC. (tests/system/package/two_dc_test.sh runs it for
    real under systemd.)"""
    def enroll(dc, cert, key, etc, ca=tls + "/ca.pem", decider=env["MESH1"]):
        return subprocess.run([GTMESHCTL, "--decider", decider, "--tls-ca", ca, "--tls-cert", cert, "--tls-key", key,
                               "--timeout", "3s", "--retry-for", "1s", "enroll", dc, "--etc", etc, "--no-start",
                               "--http", "127.0.0.1:9465"], capture_output=True, text=True, timeout=60)
    etc = os.path.join(work, "etc-enrolled")
    out = enroll("fra", tls + "/agent-fra.pem", tls + "/agent-fra.key", etc)
    check(out.returncode == 0 and "enrolled agent-fra (agent of fra, instance a1): cluster config version" in out.stdout,
          "gtmeshctl enroll fra with fra's agent certificate: %s" % (out.stdout + out.stderr).strip().splitlines()[:1])
    # The certificate binds instance a1: an agent started with another
    # --instance refuses to start, naming both (the unit passes none).
    out = subprocess.run([GTMESH, "agent", "--config", os.path.join(work, "cluster.yaml"), "--dc", "fra",
                          "--instance", "a7", "--decider", env["MESH1"], "--tls-ca", tls + "/ca.pem", "--tls-cert",
                          tls + "/agent-fra.pem", "--tls-key", tls + "/agent-fra.key"],
                         capture_output=True, text=True, timeout=30)
    check(out.returncode == 2 and "--instance a7: the certificate" in out.stderr and
          "binds this agent to instance a1" in out.stderr,
          "an agent whose --instance differs from its certificate's refuses to start: %s" % out.stderr.strip()[-200:])
    env_file = open(os.path.join(etc, "agent-fra.env")).read() if os.path.exists(os.path.join(etc, "agent-fra.env")) else ""
    check('DECIDERS="--decider %s"' % env["MESH1"] in env_file and
          'TLS="--tls-ca %s/tls/ca.pem --tls-cert %s/tls/agent-fra.pem --tls-key %s/tls/agent-fra.key"' % (etc, etc, etc)
          in env_file and 'HTTP="--http 127.0.0.1:9465"' in env_file,
          "the env file names the deciders, the installed TLS files and the listener")
    check(os.path.exists(os.path.join(etc, "gtmesh.yaml")) and
          open(os.path.join(etc, "gtmesh.yaml")).read() == open(os.path.join(work, "cluster.yaml")).read(),
          "the config written is the cluster's, as the decider holds it")
    modes = {f: oct(os.stat(os.path.join(etc, "tls", f)).st_mode & 0o777) for f in os.listdir(os.path.join(etc, "tls"))}
    check(modes == {"ca.pem": "0o640", "agent-fra.pem": "0o640", "agent-fra.key": "0o640"},
          "the CA, certificate and key are installed 0640: %s" % modes)
    subprocess.run([GTMESHCTL, "ca", "issue", "agent-lhr", "--role", "agent", "--dc", "lhr", "--dir", tls], check=True,
                   capture_output=True, timeout=60)
    subprocess.run([GTMESHCTL, "ca", "issue", "fra-agent", "--role", "agent", "--dc", "fra", "--dir", other],
                   check=True, capture_output=True, timeout=60)
    refusals = [
        ("another DC's certificate", ("iad", tls + "/agent-fra.pem", tls + "/agent-fra.key"),
         "needs an agent certificate of iad"),
        ("an operator certificate", ("fra", tls + "/gtmeshctl.pem", tls + "/gtmeshctl.key"),
         "is the certificate of gtmeshctl (operator)"),
        ("a DC the cluster's config lacks", ("lhr", tls + "/agent-lhr.pem", tls + "/agent-lhr.key"),
         "has no datacenter 'lhr'"),
        ("a certificate of another CA", ("fra", other + "/fra-agent.pem", other + "/fra-agent.key"),
         "no decider gave the cluster's config"),
        ("a key that is not the certificate's", ("fra", tls + "/agent-fra.pem", tls + "/agent-iad.key"),
         "key values mismatch"),
    ]
    for what, (dc, cert, key), expected in refusals:
        scratch = os.path.join(work, "etc-refused")
        out = enroll(dc, cert, key, scratch)
        check(out.returncode == 1 and expected in out.stderr and not os.path.exists(scratch),
              "enroll refuses %s and writes nothing: %s" % (what, out.stderr.strip().splitlines()[:1]))
    out = enroll("fra", tls + "/agent-fra.pem", tls + "/agent-fra.key", os.path.join(work, "etc-refused"),
                 decider="127.0.0.1:1")
    check(out.returncode == 1 and "127.0.0.1:1: cannot connect" in out.stderr and "nothing was written" in out.stderr,
          "enroll with no decider reachable says which and writes nothing")


def serial_of(pem):
    out = subprocess.run(["openssl", "x509", "-in", pem, "-noout", "-serial"], capture_output=True, text=True,
                         timeout=30).stdout.strip()
    return out.partition("=")[2].lower().lstrip("0") or "0"


def served_serial(address, tls):
    """The serial of the certificate a node presents in a new handshake."""
    host, port = address.rsplit(":", 1)
    hello = subprocess.run(["openssl", "s_client", "-connect", "%s:%s" % (host, port), "-CAfile", tls + "/ca.pem",
                            "-cert", tls + "/gtmeshctl.pem", "-key", tls + "/gtmeshctl.key"],
                           input=b"", capture_output=True, timeout=30).stdout.decode("latin-1")
    m = re.search(r"-----BEGIN CERTIFICATE-----.*?-----END CERTIFICATE-----", hello, re.S)
    if not m:
        return None
    out = subprocess.run(["openssl", "x509", "-noout", "-serial"], input=m.group(0), capture_output=True, text=True,
                         timeout=30).stdout.strip()
    return out.partition("=")[2].lower().lstrip("0") or "0"


def credentials_checks(work, env, tls, certs, env_vars):
    """Credentials that can be rotated and revoked (docs/mesh.md,
    "Rotating and revoking certificates")."""
    ctl = lambda *args, cert="gtmeshctl", decider=env["MESH1"], extra=(): subprocess.run(
        [GTMESHCTL, "--decider", decider, "--tls-ca", tls + "/ca.pem", "--tls-cert", "%s/%s.pem" % (tls, cert),
         "--tls-key", "%s/%s.key" % (tls, cert), "--timeout", "2s", "--retry-for", "0s", *extra, *args],
        capture_output=True, text=True, timeout=60)
    pid = lambda name: int(open(os.path.join(work, name + ".pid")).read())
    log = lambda name: open(os.path.join(work, name + ".log")).read()

    # 1. A renewed certificate is used for new handshakes, without a restart
    # and without dropping links; SIGHUP reads the files again (it used to
    # end the process).
    old = serial_of(tls + "/decider2.pem")
    subprocess.run([GTMESHCTL, "ca", "issue", "decider2", "--role", "decider", "--dir", tls], check=True,
                   capture_output=True, timeout=60)
    new = serial_of(tls + "/decider2.pem")
    seen = wait_until(lambda: served_serial(env["MESH2"], tls) == new, 10)
    check(new != old and seen and "the TLS files changed: new handshakes use them" in log("decider2"),
          "a renewed decider certificate is served to new handshakes within seconds (serial %s -> %s)" % (old, new))
    os.kill(pid("decider2"), signal.SIGHUP)
    ok = wait_until(lambda: "SIGHUP: the TLS files were read again" in log("decider2"), 5)
    st = ctl("status", decider=env["MESH2"])
    check(ok and st.returncode == 0 and st.stdout.count(", connected)") >= 2,
          "SIGHUP makes a decider read its TLS files again and it keeps running with its peers connected")
    # 2. Revocation through the log: an operator certificate.
    subprocess.run([GTMESHCTL, "ca", "issue", "mallory", "--role", "operator", "--dir", tls], check=True,
                   capture_output=True, timeout=60)
    before = [ctl("status", cert="mallory", decider=env["MESH%d" % n]).returncode for n in (1, 2, 3)]
    r = ctl("ca", "revoke", "mallory", extra=("--dir", tls))
    t0 = time.monotonic()
    refused = {}
    for n in (1, 2, 3):
        ok = wait_until(lambda: ctl("status", cert="mallory", decider=env["MESH%d" % n]).returncode != 0, 5, 0.05)
        refused[n] = round(time.monotonic() - t0, 2) if ok else None
    check(before == [0, 0, 0] and r.returncode == 0 and "revoked" in r.stdout and
          all(v is not None and v <= 1.5 for v in refused.values()),
          "gtmeshctl ca revoke mallory: every decider refuses that certificate after (s): %s (%s)"
          % (refused, (r.stdout + r.stderr).strip()))
    st = ctl("status")
    check("revoked: certificate serial %s (mallory (operator))" % serial_of(tls + "/mallory.pem") in st.stdout,
          "status lists the revocation")
    # An agent's: its open link is closed at once and it cannot come back.
    agents = lambda: sum(int(m) for n in (1, 2, 3) for m in
                         re.findall(r"dc sin: .*?(\d+) agent\(s\) connected", ctl("status", decider=env["MESH%d" % n]).stdout))
    had = agents()
    r = ctl("ca", "revoke", serial_of(tls + "/agent-sin.pem"))
    t0 = time.monotonic()
    gone = wait_until(lambda: agents() == 0, 3, 0.1)
    took = time.monotonic() - t0
    time.sleep(3)  # the agent retries with its backoff meanwhile
    logs = "".join(log("decider%d" % n) for n in (1, 2, 3))
    check(had == 1 and r.returncode == 0 and gone and took <= 1.5 and agents() == 0 and
          "closed the link of agent-sin (agent of sin, instance a1)" in logs and "is revoked (gtmeshctl ca revoke)" in logs,
          "revoking agent-sin's certificate by serial closes its link in %.2f s and its reconnects are refused" % took)
    # A decider's old certificate, after a renewal (as after a leak): the
    # agents learn the revocation from the log too. agent-iad, restarted,
    # links to decider2 first; decider2 is then renewed, so that link still
    # uses the old certificate. Only the agent can close it (decider2 checks
    # its peers' serials, not its own), and it comes back over the new one.
    iad_on = lambda n: sum(int(m) for m in re.findall(r"dc iad: .*?(\d+) agent\(s\) connected",
                                                      ctl("status", decider=env["MESH%d" % n]).stdout))
    subprocess.run([CLUSTER, "restart-agent", work, "iad"], check=True, env=env_vars, stdout=subprocess.DEVNULL,
                   timeout=60)
    on_d2 = wait_until(lambda: iad_on(2) == 1, 10, 0.1)
    mark = len(log("agent-iad"))
    current = serial_of(tls + "/decider2.pem")
    subprocess.run([GTMESHCTL, "ca", "issue", "decider2", "--role", "decider", "--dir", tls], check=True,
                   capture_output=True, timeout=60)
    renewed = wait_until(lambda: served_serial(env["MESH2"], tls) == serial_of(tls + "/decider2.pem"), 10)
    r = ctl("ca", "revoke", current)
    t0 = time.monotonic()
    closed = wait_until(lambda: "closed the link of decider2 (decider): certificate serial %s was revoked" % current
                        in log("agent-iad")[mark:], 3, 0.05)
    took = time.monotonic() - t0
    back = wait_until(lambda: sum(iad_on(n) for n in (1, 2, 3)) == 1, 10, 0.2)
    check(on_d2 and renewed and r.returncode == 0 and closed and took <= 1.5 and back and
          "revokes 3 certificate(s): this agent refuses them from now on" in log("agent-fra"),
          "revoking decider2's certificate after its renewal: agent-iad closes its link over it in %.2f s and "
          "reconnects; agent-fra learns the list too (%s %s)" % (took, [on_d2, renewed, closed, back], (r.stdout + r.stderr).strip()[-60:]))
    # Nobody revokes the certificate they are using; a serial must be one.
    own = ctl("ca", "revoke", "gtmeshctl", extra=("--dir", tls))
    bad = ctl("ca", "revoke", "not-a-serial!", extra=("--dir", tls))
    check(own.returncode != 0 and "is the certificate this request came with" in own.stderr and bad.returncode == 2,
          "revoking one's own certificate is refused, and so is a name that is neither a certificate nor a serial: %s"
          % own.stderr.strip())
    # 3. A CRL file (--tls-crl, cluster.tls.crl): here gtmeshctl's own check
    # of the decider it dials, with the same transport every node uses.
    ca_dir = os.path.join(work, "crl-ca")
    os.makedirs(ca_dir)
    open(os.path.join(ca_dir, "index.txt"), "w").close()
    open(os.path.join(ca_dir, "crlnumber"), "w").write("01\n")
    cnf = os.path.join(ca_dir, "ca.cnf")
    open(cnf, "w").write("[ca]\ndefault_ca = d\n[d]\ndatabase = %s/index.txt\ncrlnumber = %s/crlnumber\n"
                         "default_md = sha256\ndefault_crl_days = 30\n" % (ca_dir, ca_dir))
    base = ["openssl", "ca", "-config", cnf, "-keyfile", tls + "/ca.key", "-cert", tls + "/ca.pem"]
    subprocess.run(base + ["-revoke", tls + "/decider1.pem"], check=True, capture_output=True, timeout=30)
    subprocess.run(base + ["-gencrl", "-out", ca_dir + "/crl.pem"], check=True, capture_output=True, timeout=30)
    d1 = ctl("status", extra=("--tls-crl", ca_dir + "/crl.pem"))
    d2 = ctl("status", decider=env["MESH2"], extra=("--tls-crl", ca_dir + "/crl.pem"))
    empty = os.path.join(ca_dir, "empty.pem")
    open(empty, "w").write("not a CRL\n")
    e = ctl("status", decider=env["MESH2"], extra=("--tls-crl", empty))
    check(d1.returncode != 0 and d2.returncode == 0 and e.returncode != 0 and "holds no PEM CRL" in e.stderr,
          "with --tls-crl a certificate on the CRL (decider1's) is refused at the handshake, the others pass, and "
          "a file without a CRL is a clear error: %s" % e.stderr.strip()[-120:])


def wait_until(fn, seconds, step=0.1):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if fn():
            return True
        time.sleep(step)
    return bool(fn())


def main():
    if not shutil.which("dig") or not shutil.which("openssl"):
        print("skip: dig or openssl missing")
        return 77
    work = tempfile.mkdtemp(prefix="gtmesh-tls-")
    env_vars = dict(os.environ, GTMESH_BIN=GTMESH)
    try:
        subprocess.run([CLUSTER, "start", work, "--tls"], check=True, env=env_vars, stdout=subprocess.DEVNULL,
                       timeout=120)
        env = {}
        for line in open(os.path.join(work, "cluster.env")):
            k, _, v = line.strip().partition("=")
            env[k] = v.strip('"')
        tls = os.path.join(work, "tls")
        certs = ["--tls-ca", tls + "/ca.pem", "--tls-cert", tls + "/gtmeshctl.pem", "--tls-key", tls + "/gtmeshctl.key"]
        deadline = time.monotonic() + 30
        answer = []
        while time.monotonic() < deadline and answer != ["192.0.2.10"]:
            answer = dig(env["DNS1"], "www.demo.example")
            time.sleep(0.1)
        check(answer == ["192.0.2.10"], "agents reach the deciders over mutual TLS: live answer %s" % answer)
        status = subprocess.run([GTMESHCTL, "--decider", env["MESH1"], *certs, "status"], capture_output=True,
                                text=True, timeout=30)
        check(status.returncode == 0 and "peers: " in status.stdout and ", connected)" in status.stdout,
              "gtmeshctl with a cluster certificate gets status; the deciders peer over TLS")
        check("(mutual TLS)" in open(os.path.join(work, "decider1.log")).read(), "the decider says it runs mutual TLS")
        plain = subprocess.run([GTMESHCTL, "--decider", env["MESH1"], "--timeout", "3s", "status"],
                               capture_output=True, text=True, timeout=60)
        check(plain.returncode != 0 and "measurements" not in plain.stdout,
              "a client without a certificate is refused")
        other = os.path.join(work, "other-ca")
        subprocess.run([GTMESHCTL, "ca", "init", "--dir", other], check=True, capture_output=True, timeout=60)
        subprocess.run([GTMESHCTL, "ca", "issue", "intruder", "--role", "operator", "--dir", other], check=True,
                       capture_output=True, timeout=60)
        intruder = subprocess.run([GTMESHCTL, "--decider", env["MESH1"], "--tls-ca", other + "/ca.pem", "--tls-cert",
                                   other + "/intruder.pem", "--tls-key", other + "/intruder.key", "--timeout", "3s",
                                   "status"], capture_output=True, text=True, timeout=60)
        check(intruder.returncode != 0 and "measurements" not in intruder.stdout,
              "a certificate from another CA is refused at the handshake")
        enroll_checks(work, env, tls, other)
        credentials_checks(work, env, tls, certs, env_vars)
        again = subprocess.run([GTMESHCTL, "ca", "init", "--dir", tls], capture_output=True, text=True, timeout=30)
        check(again.returncode != 0 and "refusing to overwrite" in again.stderr, "ca init never overwrites a CA")
    finally:
        subprocess.run([CLUSTER, "stop", work], env=env_vars, timeout=60)
        if failures:
            for log in sorted(os.listdir(work)):
                if log.endswith(".log"):
                    print("---- " + log)
                    print(open(os.path.join(work, log)).read()[-2000:])
        shutil.rmtree(work, ignore_errors=True)
    print("%d check(s) failed" % len(failures) if failures else "all checks passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
