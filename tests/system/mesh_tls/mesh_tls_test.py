#!/usr/bin/env python3
"""Mutual TLS on every mesh link: a cluster whose CA and role certificates
come from `gtmeshctl ca`, agents and deciders talking over the mesh
transport. A node with a certificate of the cluster CA gets in; one without
a certificate, or with one from another CA, is refused at the handshake.
(Roles are checked by tests/system/control_plane.)"""
import os
import re
import shutil
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
    check(out.returncode == 0 and "enrolled agent-fra (agent of fra): cluster config version" in out.stdout,
          "gtmeshctl enroll fra with fra's agent certificate: %s" % (out.stdout + out.stderr).strip().splitlines()[:1])
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
