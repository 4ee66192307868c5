#!/usr/bin/env python3
"""Trust the control plane: every defect of the issue, reproduced against the
real binaries, must stay fixed.

A plain single decider on loopback:
  1. plain mode refuses to listen outside loopback
  2. frames claiming 4 GiB / 16 MB before and after the hello allocate
     nothing: RSS stays flat, the connection is closed
  3. 200 half-open connections are closed within the handshake timeout and
     every descriptor comes back
  4. a one-key typo (`criterion: {equal: up}`) is an error naming the line,
     from gtmeshctl (exit 1, not SIGABRT) and as a raw config_push frame
     sent straight to the decider, which stays up and answers
  5. an unexpected exception inside the decider actor ends the process with
     exit code 70 instead of leaving a frozen node

A three-decider cluster with mutual TLS and role certificates (tools/cluster.sh --tls):
  6. roles: an agent certificate cannot push, drain or set faults; an agent
     of fra cannot report for iad; an operator cannot gossip; a certificate
     without a role is refused at the handshake; gtmeshctl refuses an agent
     certificate locally
  7. connect-and-close on the mesh port (5 per second) drops no link
  8. the lost-push reproduction: kill -9 decider 1, push A through decider 2,
     restart decider 1, at once push B through decider 1: two versions, in
     order, the same history on every decider, B served everywhere
  9. without a majority a push fails with a clear error and nothing changes;
     responders keep answering; with the majority back it goes through
"""
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "mesh_lib"))
import mesh_wire  # noqa: E402

SRC = os.environ.get("GTMESH_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", "..", ".."))
GTMESH = os.environ.get("GTMESH_BIN", os.path.join(SRC, "build", "tools", "gtmesh"))
GTMESHCTL = os.path.join(os.path.dirname(GTMESH), "gtmeshctl")
CLUSTER = os.path.join(SRC, "tools", "cluster.sh")
failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    if not ok:
        failures.append(what)
    return ok


def wait_for(fn, seconds, step=0.05):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        v = fn()
        if v:
            return v
        time.sleep(step)
    return fn()


def dig(server, name):
    host, port = server.rsplit(":", 1)
    out = subprocess.run(["dig", "@" + host, "-p", port, name, "+short", "+time=1", "+tries=1"],
                         capture_output=True, text=True, timeout=10)
    return out.stdout.split()


def rss_kb(pid):
    for line in open("/proc/%d/status" % pid):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def fd_count(pid):
    return len(os.listdir("/proc/%d/fd" % pid))


def host_port(address):
    host, port = address.rsplit(":", 1)
    return host, int(port)


TYPO = """
datacenters: [{name: fra}, {name: iad}]
services:
  - {name: web, backends: {fra: ["10.0.0.1:80"], iad: ["10.1.0.1:80"]}}
zones:
  - name: example.com
    soa: {primary: ns1, admin: hostmaster}
    ns: [ns1]
    records:
      - name: www
        type: A
        dc:
          source: service
          service: web
          metric: healthyBackends
          gate: {source: host, metric: status, criterion: {equal: up}}
          answers: {fra: [192.0.2.1], iad: [192.0.2.2]}
"""


def flood_handshake_slots(host, port, stop, counter):
    """From 20 loopback addresses (127.0.0.10-29), 8 connections each held
    open without a byte and reopened the moment the decider closes one:
    160 against 64 handshake slots. Bounded: 60 s, 200,000 connections."""
    import select
    held = {}
    sources = ["127.0.0.%d" % (10 + i) for i in range(20)]
    deadline = time.monotonic() + 60
    while not stop.is_set() and time.monotonic() < deadline and counter["opened"] < 200000:
        for src in sources:
            while sum(1 for v in held.values() if v == src) < 8:
                c = socket.socket()
                c.setblocking(False)
                c.bind((src, 0))
                c.connect_ex((host, port))
                held[c] = src
                counter["opened"] += 1
        for c in select.select(list(held), [], [], 0.002)[0]:
            try:
                gone = c.recv(4096) == b""
            except BlockingIOError:
                gone = False
            except OSError:
                gone = True
            if gone:
                del held[c]
                c.close()
    for c in held:
        c.close()


def plain_decider(work):
    """Checks 1-5 against one plain decider."""
    cfg = os.path.join(work, "single.yaml")
    open(cfg, "w").write(TYPO.replace("{equal: up}", "{equals: up}"))
    # 1. Plain mode stays on loopback.
    r = subprocess.run([GTMESH, "decider", "--config", cfg, "--data-dir", os.path.join(work, "wild"),
                        "--listen", "0.0.0.0:0", "--advertise", "192.0.2.1:7400"],
                       capture_output=True, text=True, timeout=30)
    check(r.returncode != 0 and "loopback only" in r.stderr,
          "plain mode refuses to listen outside loopback: %s" % r.stderr.strip()[-160:])

    ports = os.path.join(work, "single.ports")
    log = open(os.path.join(work, "single.log"), "w")
    proc = subprocess.Popen([GTMESH, "decider", "--config", cfg, "--data-dir", os.path.join(work, "single"),
                             "--listen", "127.0.0.1:0", "--advertise", "single:1", "--dns", "127.0.0.1:0",
                             "--port-file", ports, "--faults"], stdout=log, stderr=log)
    try:
        check(wait_for(lambda: os.path.exists(ports) and os.path.getsize(ports) > 0, 30), "a plain decider starts")
        mesh = [l.split()[1] for l in open(ports) if l.startswith("mesh")][0]
        host, port = host_port(mesh)
        ok = wait_for(lambda: "config version 1" in subprocess.run(
            [GTMESHCTL, "--decider", mesh, "status"], capture_output=True, text=True, timeout=30).stdout, 15, 0.2)
        check(bool(ok), "its single-voter log commits the start config as version 1")

        # 2. Allocation bombs: the old BASP header, then length prefixes.
        base_rss = rss_kb(proc.pid)
        bombs = [bytes([1, 0, 0, 0]) + b"\xff\xff\xff\xff" + bytes(24),  # BASP-style: 32 bytes claiming 4 GiB
                 b"\xff\xff\xff\xff", b"\x40\x00\x00\x00" * 3]
        closed = 0
        for bomb in bombs:
            link = mesh_wire.Link(host, port, "bomb", "operator", hello=False)
            link.send_raw(bomb)
            closed += link.closed_within(2)  # the decider's own hello is read and ignored
            link.close()
        check(closed == len(bombs), "size claims before the hello are refused at once (%d of %d closed)"
              % (closed, len(bombs)))
        # After a hello: a 15 MB claim with 1 KB behind it holds 1 KB, not 15 MB.
        links = []
        for _ in range(20):
            l = mesh_wire.Link(host, port, "probe", "operator")
            l.send_raw(b"\x00\xf0\x00\x00" + b"x" * 1024)
            links.append(l)
        time.sleep(0.3)  # let the decider read them (what is measured here is memory, not timing)
        grown = rss_kb(proc.pid) - base_rss
        check(grown < 32 * 1024, "20 links claiming 15 MB frames each grow RSS by %d KB (limit 32 MB)" % grown)
        big = mesh_wire.Link(host, port, "probe", "operator")
        big.send_raw(b"\x7f\xff\xff\xff")
        check(big.closed_within(2), "a frame above 112 MB is refused and the link closed")
        # Frames of up to 112 MB come from deciders and operators (a config
        # of 1,000,000 records, issue 42); an agent's stop at 16 MB.
        agent_big = mesh_wire.Link(host, port, "agent-fra", "agent", "fra")
        agent_big.send_raw(b"\x01\x40\x00\x00" + b"x" * 1024)  # claims 20 MB
        operator_big = mesh_wire.Link(host, port, "probe", "operator")
        operator_big.send_raw(b"\x01\x40\x00\x00" + b"x" * 1024)
        # The operator first: its link idles out after 1 s; the agent's
        # closed link stays closed however late it is read.
        check(not operator_big.closed_within(0.5), "an operator's frame claiming 20 MB is read on (the link stays)")
        check(agent_big.closed_within(2), "an agent's frame claiming 20 MB is refused and its link closed")
        agent_big.close()
        operator_big.close()
        # Protocol versions (core/mesh/protocol_version.hpp): the decider
        # states its own; a peer with no version in common is refused at its
        # hello, and both versions are named; a hello without any (0.1.0) links.
        probe = mesh_wire.Link(host, port, "probe", "operator")
        own = probe.expect(["hello"], 3)
        probe.close()
        caps = (own or {}).get("body", {}).get("cap") or []
        check(own is not None and own["body"].get("pv", 0) >= 1 and own["body"].get("pm", 0) >= 1 and
              "revoke" in caps and "tls-crl" in caps,
              "the decider's hello states its protocol and capabilities: %s" % (own or {}).get("body"))
        future = mesh_wire.Link(host, port, "future", "operator", hello_extra={"pv": 90, "pm": 90})
        check(future.closed_within(2), "a peer that speaks only mesh protocol 90 is refused at its hello")
        future.close()
        check(bool(wait_for(lambda: "it speaks mesh protocol 90, this node 1: upgrade this node" in
                            open(os.path.join(work, "single.log")).read(), 5)),
              "and the decider's log names both versions and which node to upgrade")
        overlap = mesh_wire.Link(host, port, "newer", "operator", hello_extra={"pv": 90, "pm": 1, "cap": ["x"]})
        check(mesh_wire.request(overlap, "status") is not None, "a newer peer that still speaks protocol 1 links")
        overlap.close()
        status = subprocess.run([GTMESHCTL, "--decider", mesh, "status"], capture_output=True, text=True,
                                timeout=30).stdout
        check("1 refused (no mesh protocol in common)" in status, "status counts the refused peer")
        silent_closed = sum(1 for l in links if l.closed_within(3))
        check(silent_closed == len(links), "links that go silent are closed within the idle timeout (%d of %d)"
              % (silent_closed, len(links)))
        for l in links:
            l.close()
        big.close()

        # 3. Half-open connections.
        base_fds = fd_count(proc.pid)
        held = [socket.create_connection((host, port), timeout=3) for _ in range(200)]
        started = time.monotonic()
        # First the decider must have taken them from the listen backlog (on
        # a loaded machine that can lag the connects): only then does "their
        # descriptors are gone" mean it closed them.
        accepted = wait_for(lambda: fd_count(proc.pid) > base_fds + 2, 10, 0.01)
        check(bool(accepted), "the decider accepts the half-open connections (fds %d -> %d)"
              % (base_fds, fd_count(proc.pid)))
        gone = wait_for(lambda: fd_count(proc.pid) <= base_fds + 2, 10, 0.1)
        took = time.monotonic() - started
        check(bool(gone), "200 half-open connections are closed within the handshake timeout (%.1f s; fds %d -> %d)"
              % (took, base_fds, fd_count(proc.pid)))
        for s in held:
            s.close()
        status = subprocess.run([GTMESHCTL, "--decider", mesh, "status"], capture_output=True, text=True, timeout=30)
        m = re.search(r"(\d+) refused \(too many handshakes\), (\d+) evicted \(the oldest handshake made room\), "
                      r"(\d+) handshake timeouts", status.stdout)
        check(m is not None and int(m.group(1)) + int(m.group(2)) + int(m.group(3)) >= 190,
              "status counts them: %s" % (m.group(0) if m else status.stdout[-300:]))

        # 3b. No lock-out before authentication (issue 24): a local process
        # holds every handshake slot of its address, reopening each as it
        # closes; an operator still gets in, every time.
        import threading
        stop = threading.Event()
        holders = []

        def hold():
            while not stop.is_set():
                holders[:] = [h for h in holders if h.fileno() != -1]
                while len(holders) < 12 and not stop.is_set():
                    try:
                        holders.append(socket.create_connection((host, port), timeout=3))
                    except OSError:
                        break
                for h in list(holders):  # a closed one reads as EOF: reopen it
                    h.setblocking(False)
                    try:
                        if h.recv(1) == b"":
                            h.close()
                    except (BlockingIOError, OSError):
                        pass
                time.sleep(0.02)

        holder = threading.Thread(target=hold, daemon=True)
        holder.start()
        time.sleep(0.5)
        answered = 0
        for _ in range(8):
            r = subprocess.run([GTMESHCTL, "--decider", mesh, "status"], capture_output=True, text=True, timeout=30)
            answered += r.returncode == 0 and "config version" in r.stdout
        stop.set()
        holder.join(5)
        for h in holders:
            h.close()
        check(answered == 8, "gtmeshctl status answers 8 of 8 while a local process holds every handshake slot "
              "(%d of 8)" % answered)


        # 4. The one-key typo.
        typo = os.path.join(work, "typo.yaml")
        open(typo, "w").write(TYPO)
        r = subprocess.run([GTMESHCTL, "--decider", mesh, "push", typo], capture_output=True, text=True, timeout=30)
        check(r.returncode == 1 and "typo.yaml:16:" in r.stderr and "nothing was pushed" in r.stderr,
              "gtmeshctl push of the typo exits 1 naming the line: %s" % r.stderr.strip().splitlines()[:1])
        r = subprocess.run([GTMESHCTL, "--decider", mesh, "push", "--no-local-check", typo], capture_output=True,
                           text=True, timeout=30)
        check(r.returncode == 1 and "typo.yaml:16:" in r.stderr and "equal" in r.stderr and
              "nothing was pushed" not in r.stderr and "rejected" in r.stderr,
              "push --no-local-check of the typo: the decider (not gtmeshctl) refuses it, naming the line and the key: %s"
              % r.stderr.strip().splitlines()[:2])
        r = subprocess.run([GTMESH, "check-config", typo], capture_output=True, text=True, timeout=30)
        check(r.returncode == 1 and "typo.yaml:16:" in r.stderr, "check-config names the line too (exit %d)"
              % r.returncode)
        # The failover budget: --budget prints every record that fails over
        # and warns past 2 minutes (mail's TTL is 300 s); `failover_budget:`
        # rejects the same record, naming its line, and exits 1.
        full = os.path.join(SRC, "configs", "full.yaml")
        mail_line = 1 + [l.strip() for l in open(full).read().splitlines()].index("- name: mail")
        r = subprocess.run([GTMESH, "check-config", "--budget", full], capture_output=True, text=True, timeout=30)
        rows = [l.split()[0] for l in r.stdout.splitlines() if l.startswith("  ")]
        check(r.returncode == 0 and rows == ["www.example.com.", "mail.example.com.", "api.example.com."]
              and "full.yaml:%d:" % mail_line in r.stderr and "shorten ttl first" in r.stderr
              and "1 record(s) over 2m" in r.stdout,
              "check-config --budget prints the three failing-over records and warns for mail: %s / %s"
              % (rows, r.stderr.strip()))
        strict = os.path.join(work, "strict.yaml")
        text = open(full).read().replace("../tests/data/test.mmdb", os.path.join(SRC, "tests", "data", "test.mmdb"))
        open(strict, "w").write("failover_budget: 90s\n" + text)
        r = subprocess.run([GTMESH, "check-config", strict], capture_output=True, text=True, timeout=30)
        check(r.returncode == 1 and "strict.yaml:%d:" % (mail_line + 1) in r.stderr and "over failover_budget 90 s" in r.stderr
              and r.stderr.count("over failover_budget") == 1,
              "failover_budget: 90s rejects mail at its line and only mail: %s" % r.stderr.strip())
        l = mesh_wire.Link(host, port, "raw-pusher", "operator")
        l.send("config_push", {"v": 0, "y": TYPO, "f": "raw.yaml", "dry": False, "id": 7})
        env = l.expect(["config_reply"], 10)
        errors = env["body"].get("e", []) if env else []
        check(env is not None and not env["body"].get("a") and any("raw.yaml:16:" in e for e in errors),
              "a raw config_push frame with the typo is answered with the error: %s" % errors[:1])
        l.close()
        status = subprocess.run([GTMESHCTL, "--decider", mesh, "status"], capture_output=True, text=True, timeout=30)
        check(status.returncode == 0 and "config version 1" in status.stdout,
              "the decider is still up and serving version 1")

        # 5. An unexpected exception ends the process.
        subprocess.run([GTMESHCTL, "--decider", mesh, "fault", "!throw", "x"], capture_output=True, text=True,
                       timeout=30)
        try:
            code = proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            code = None
        log.flush()
        check(code == 70 and "unexpected exception" in open(os.path.join(work, "single.log")).read(),
              "an exception inside the decider actor ends the process with exit code 70 (got %s)" % code)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        log.close()


def tls_cluster(work):
    """Checks 6-9 against tools/cluster.sh --tls."""
    env_vars = dict(os.environ, GTMESH_BIN=GTMESH)
    cdir = os.path.join(work, "cluster")
    subprocess.run([CLUSTER, "start", cdir, "--tls"], check=True, env=env_vars, stdout=subprocess.DEVNULL,
                   timeout=180)
    env = {}
    for line in open(os.path.join(cdir, "cluster.env")):
        k, _, v = line.strip().partition("=")
        env[k] = v.strip('"')
    tls_dir = os.path.join(cdir, "tls")

    def certs(name):
        return {"ca": tls_dir + "/ca.pem", "cert": "%s/%s.pem" % (tls_dir, name), "key": "%s/%s.key" % (tls_dir, name)}

    op = ["--tls-ca", tls_dir + "/ca.pem", "--tls-cert", tls_dir + "/gtmeshctl.pem", "--tls-key",
          tls_dir + "/gtmeshctl.key"]

    def ctl(mesh, *args, retry_for="15s"):
        return subprocess.run([GTMESHCTL, "--decider", mesh, *op, "--retry-for", retry_for, *args],
                              capture_output=True, text=True, timeout=60)

    def ctl_all(*args, retry_for="15s"):
        deciders = []
        for n in (1, 2, 3):
            deciders += ["--decider", env["MESH%d" % n]]
        return subprocess.run([GTMESHCTL, *deciders, *op, "--retry-for", retry_for, *args], capture_output=True,
                              text=True, timeout=60)

    def logs():
        return "".join(open(os.path.join(cdir, f)).read() for f in os.listdir(cdir) if f.startswith("decider")
                       and f.endswith(".log"))

    try:
        ok = wait_for(lambda: dig(env["DNS1"], "www.demo.example") == ["192.0.2.10"], 30, 0.1)
        check(bool(ok), "the TLS cluster answers from live measurements")
        ok = wait_for(lambda: all("config version 1" in ctl(env["MESH%d" % n], "status").stdout for n in (1, 2, 3)),
                      20, 0.2)
        check(bool(ok), "all three deciders hold config version 1")

        # 6. Roles.
        host, port = host_port(env["MESH1"])
        cfg = open(os.path.join(cdir, "cluster.yaml")).read()
        # An agent certificate as 0.1.0 issued it: its DC, no instance (one
        # origin of fra, the first it speaks as).
        open(tls_dir + "/old.ext", "w").write("subjectAltName=URI:gtmesh:agent:fra\n")
        subprocess.run(["openssl", "req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=agent-fra-old", "-keyout",
                        tls_dir + "/agent-fra-old.key", "-out", tls_dir + "/agent-fra-old.csr"], check=True,
                       capture_output=True)
        subprocess.run(["openssl", "x509", "-req", "-in", tls_dir + "/agent-fra-old.csr", "-CA", tls_dir + "/ca.pem",
                        "-CAkey", tls_dir + "/ca.key", "-CAcreateserial", "-extfile", tls_dir + "/old.ext", "-out",
                        tls_dir + "/agent-fra-old.pem", "-days", "2"], check=True, capture_output=True)
        # fra's own agent certificate binds instance a1 (gtmeshctl ca issue
        # --instance): it speaks as fra/a1 only, never as another instance.
        bound = mesh_wire.Link(host, port, "agent-fra", "agent", "fra", tls=certs("agent-fra"))
        other_instance = mesh_wire.request(bound, "node-report", ["fra/a2", "fra", "1", "x"])
        check(other_instance is not None and not other_instance[0] and
              "reports as fra/a1 (its certificate binds that instance)" in other_instance[1],
              "an instance-bound agent certificate cannot report as another instance: %s" % (other_instance,))
        bound.close()
        agent = mesh_wire.Link(host, port, "agent-fra-old", "agent", "fra", tls=certs("agent-fra-old"))
        agent.send("config_push", {"v": 0, "y": cfg, "f": "evil.yaml", "dry": False, "id": 99})
        env_ = agent.expect(["config_reply"], 10)
        err = (env_["body"].get("e") or [""])[0] if env_ else ""
        check(env_ is not None and not env_["body"].get("a") and "needs an operator certificate" in err,
              "an agent certificate cannot push a config: %s" % err)
        for command, args in (("drain", ["fra", "evil"]), ("fault", ["*", "partition"])):
            answer = mesh_wire.request(agent, command, args)
            check(answer is not None and not answer[0] and "needs an operator certificate" in answer[1],
                  "an agent certificate cannot %s: %s" % (command, answer))
        # iad's host down, claimed by fra's agent (host status: source 0, metric 3).
        item = {"d": "iad", "s": 0, "k": "", "m": 3, "v": 0.0, "t": int(time.time() * 1000), "q": 1}
        agent.send("measurements", {"o": "iad/evil", "base": 0, "max": 1, "i": [item]}, sender="iad/evil")
        agent.send("measurements", {"o": "fra/evil", "base": 0, "max": 1, "i": [item]}, sender="fra/evil")
        # A Raft RPC from an agent (a vote request for itself, say).
        agent.send("consensus", {"c": 1, "fi": 7, "fa": "10.9.9.9:7400", "ty": 3, "term": 99})
        # Frames are handled in order: the reply to this one means the
        # frames before it were handled (closing at once could reset the
        # connection before they are read).
        mesh_wire.request(agent, "node-report", ["fra/evil", "fra", "1", "probe"])
        # Node reports: the agent's own DC and origin only, shown as text
        # (issue 24: agent-fra wrote a node of iad and a line of its own).
        forged = mesh_wire.request(agent, "node-report",
                                   ["iad/a1", "iad", "999", "healthy\n  dc iad: host up, FORGED by agent-fra"])
        check(forged is not None and not forged[0] and "own DC only" in forged[1],
              "a node report for another DC is refused: %s" % (forged,))
        other = mesh_wire.request(agent, "node-report", ["fra/a1", "fra", "999", "x"])
        check(other is not None and not other[0] and "reports as fra/evil" in other[1],
              "a node report as another origin of its DC is refused: %s" % (other,))
        mesh_wire.request(agent, "node-report", ["fra/evil", "fra", "1", "probe\n  dc iad: FORGED line\x1b[2J"])
        agent.close()
        operator = mesh_wire.Link(host, port, "gtmeshctl", "operator", tls=certs("gtmeshctl"))
        operator.send("digest", {"h": [], "cv": 0, "ch": 0, "ov": 0, "r": True})
        mesh_wire.request(operator, "explain", ["www.demo.example", "A"])
        operator.close()
        st = wait_for(lambda: (lambda t: t if "measurements for another DC" in t and "gossip from a non-decider" in t
                                else None)(ctl(env["MESH1"], "status").stdout), 10, 0.2)
        check(bool(st), "measurements for another DC and gossip from an operator are counted and dropped")
        st = wait_for(lambda: (lambda t: t if "consensus messages refused" in t else None)(
            ctl(env["MESH1"], "status").stdout), 10, 0.2)
        check(bool(st), "a Raft RPC from an agent certificate is refused and counted")
        status = ctl(env["MESH1"], "status").stdout
        check("node iad/a1" not in status and not re.search(r"^\s*dc iad: (host up, )?FORGED", status, re.M) and
              "\x1b" not in status and "probe?  dc iad: FORGED line?[2J" in status,
              "status shows no forged node or line, and the agent's text on its own line: %s" %
              [l for l in status.splitlines() if "FORGED" in l or "fra/evil" in l])
        check(dig(env["DNS1"], "www.demo.example") == ["192.0.2.10"] and "version 1" in ctl(env["MESH1"], "status").stdout,
              "and nothing of it reached state: still version 1, still fra")
        # No lock-out from many addresses (issue 24): 20 addresses hold 8
        # TLS handshakes each, reopened as they close. The decider evicts
        # from the address holding the most, so an operator's one handshake
        # is never the one to go (evicting the oldest overall failed 2 of 10).
        import threading
        flood_stop, flood = threading.Event(), {"opened": 0}
        flooder = threading.Thread(target=flood_handshake_slots, args=(host, port, flood_stop, flood), daemon=True)
        flooder.start()
        wait_for(lambda: flood["opened"] >= 320, 10, 0.01)  # every slot taken, and churning
        answered = 0
        for _ in range(10):
            r = subprocess.run([GTMESHCTL, "--decider", env["MESH1"], *op, "--retry-for", "0s", "status"],
                               capture_output=True, text=True, timeout=30)
            answered += r.returncode == 0 and "config version" in r.stdout
        opened = flood["opened"]
        flood_stop.set()
        flooder.join(10)
        check(opened >= 320 and answered == 10,
              "gtmeshctl status (TLS) answers %d of 10 while 20 addresses hold 8 handshakes each, reopened as they "
              "close (%d connections opened)" % (answered, opened))
        # A certificate of the cluster CA without a role.
        subprocess.run(["openssl", "req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=norole", "-keyout",
                        tls_dir + "/norole.key", "-out", tls_dir + "/norole.csr"], check=True, capture_output=True)
        subprocess.run(["openssl", "x509", "-req", "-in", tls_dir + "/norole.csr", "-CA", tls_dir + "/ca.pem",
                        "-CAkey", tls_dir + "/ca.key", "-CAcreateserial", "-out", tls_dir + "/norole.pem", "-days",
                        "2"], check=True, capture_output=True)
        try:
            nr = mesh_wire.Link(host, port, "norole", "operator", tls=certs("norole"))
            refused = nr.closed_within(5)
            nr.close()
        except OSError:
            refused = True
        check(refused and "carries no gtmesh role" in logs(), "a certificate without a role is refused")
        r = subprocess.run([GTMESHCTL, "--decider", env["MESH1"], "--tls-ca", tls_dir + "/ca.pem", "--tls-cert",
                            tls_dir + "/agent-fra.pem", "--tls-key", tls_dir + "/agent-fra.key", "status"],
                           capture_output=True, text=True, timeout=30)
        check(r.returncode == 1 and "agent-fra (agent of fra, instance a1)" in r.stderr,
              "gtmeshctl refuses to run with an agent certificate: %s" % r.stderr.strip()[-120:])

        # A decider certificate forwards proposals (kind 12) to the leader;
        # it must not commit what no operator checked, under any author it
        # likes (issue 24: "iad drained by alice" and a broken config as
        # version 2 "by alice"; issue 41: "iad drained by alice via
        # decider2", alice never acted). An operator action carries a proof
        # of its author (docs/mesh.md, "Who did it"): an operator's
        # signature, or the vouch of the decider that authenticated the
        # client, which the leader checks against the link it came by.
        leader = None
        listed = ctl(env["MESH1"], "member", "list").stdout
        m = re.search(r"^(\S+) voter leader", listed, re.M)
        leader = m.group(1) if m else env["MESH1"]
        lhost, lport = host_port(leader)
        # Another decider's certificate (a link from the leader's own name is
        # refused as a connection to itself).
        forwarder = next("decider%d" % n for n in (1, 2, 3) if env["MESH%d" % n] != leader)
        other = next("decider%d" % n for n in (1, 2, 3) if env["MESH%d" % n] != leader and
                     "decider%d" % n != forwarder)

        def entry(**fields):
            base = {"k": 1, "y": "", "yz": "", "f": "", "dc": "", "d": False, "by": "", "id": 0, "at": 0, "lu": 0,
                    "bv": 0}
            base.update(fields)
            return mesh_wire.pack(base)

        def forward(e, pid):
            d1 = mesh_wire.Link(lhost, lport, forwarder, "decider", tls=certs(forwarder))
            d1.send("proposal", {"id": pid, "e": e})
            reply = d1.expect(["proposal_reply"], 20)
            d1.close()
            return reply["body"] if reply else None

        def drained_by():
            line = next((l for l in ctl(env["MESH1"], "status").stdout.splitlines() if "override: iad drained" in l),
                        "")
            return line

        versions_before = ctl(env["MESH1"], "configs").stdout.count("\n")
        bad = forward(entry(k=1, y="zones: [not: a config", f="evil.yaml", by="alice", id=424242), 901)
        check(bad is not None and not bad.get("ok") and "refused by the leader: " in (bad.get("e") or ""),
              "a broken config forwarded with a decider certificate is refused: %s" % bad)
        raw = forward(entry(k=3, dc="sin", d=True, by="alice", id=434343), 902)
        check(raw is not None and not raw.get("ok") and "no proof of its author" in (raw.get("e") or ""),
              "a raw drain forwarded by a decider (no signature, no vouch) is refused: %s" % raw)
        lying = forward(entry(k=3, dc="iad", d=True, by="alice", id=434344, vc="alice", vv="HTTPS listener (console)",
                              vb=other, fv=3), 904)
        check(lying is not None and not lying.get("ok") and "vouched for as decider '%s'" % other in
              (lying.get("e") or ""), "a vouch naming another decider than the link's is refused: %s" % lying)
        forged = forward(entry(k=3, dc="iad", d=True, by="alice", id=434345, sc=b"\x30\x03\x02\x01\x01", sa=0,
                               sg=b"x" * 64, fv=3), 905)
        check(forged is not None and not forged.get("ok") and "signature" in (forged.get("e") or ""),
              "a drain with a forged signature is refused: %s" % forged)
        vouched = forward(entry(k=3, dc="iad", d=True, by="alice", id=434346, vc="alice",
                                vv="HTTPS listener (console)", vb=forwarder, fv=3), 906)
        check(vouched is not None and vouched.get("ok"), "a drain the forwarding decider vouches for is committed: %s"
              % vouched)
        st = wait_for(lambda: (lambda l: l if "alice, authenticated by %s's HTTPS listener (console)" % forwarder
                               in l else None)(drained_by()), 10, 0.2)
        check(bool(st), "under the client it names, authenticated by the decider whose link brought it: %s"
              % drained_by())
        # Applied after the raw drain of sin would have been, had it been appended.
        check(not any("override: sin drained" in l for l in ctl(env["MESH1"], "status").stdout.splitlines()),
              "and the raw drain of sin was never applied")
        unknown = forward(entry(k=3, dc="nowhere", d=True, by="alice", id=444444, vc="alice",
                                vv="HTTPS listener (console)", vb=forwarder, fv=3), 903)
        check(unknown is not None and not unknown.get("ok") and "unknown datacenter" in (unknown.get("e") or ""),
              "a drain of an unknown DC forwarded by a decider is refused: %s" % unknown)
        check(ctl(env["MESH1"], "configs").stdout.count("\n") == versions_before and
              "CONFIG NOT APPLIED" not in ctl(env["MESH1"], "status").stdout, "the config history is unchanged")
        ctl_all("undrain", "iad")
        # gtmeshctl signs: the author is the operator certificate, proven on every decider.
        r = ctl(env["MESH1"], "drain", "iad")
        signed = wait_for(lambda: (lambda l: l if " (signed)" in l else None)(drained_by()), 10, 0.2)
        check(r.returncode == 0 and signed and "by gtmeshctl (signed)" in signed,
              "gtmeshctl drain is recorded under the signing operator's certificate: %s" % (signed or r.stderr))
        ctl_all("undrain", "iad")

        # 7. Connect-and-close under TLS drops no link.
        before = len(re.findall(r"is down|left:|disconnected", logs()))
        for _ in range(50):
            s = socket.create_connection((host, port), timeout=2)
            s.close()
            time.sleep(0.2)
        after = len(re.findall(r"is down|left:|disconnected", logs()))
        check(after == before, "50 bare connect-and-close in 10 s drop no mesh link (%d -> %d)" % (before, after))
        check(ctl(env["MESH1"], "status").returncode == 0, "and gtmeshctl status still answers")

        # 8. The lost-push reproduction.
        pid1 = int(open(os.path.join(cdir, "decider1.pid")).read())
        os.kill(pid1, signal.SIGKILL)
        a = os.path.join(cdir, "a.yaml")
        b = os.path.join(cdir, "b.yaml")
        open(a, "w").write(cfg.replace("fail_safe: [192.0.2.250]", "fail_safe: [192.0.2.251]", 1))
        open(b, "w").write(cfg.replace("fail_safe: [192.0.2.250]", "fail_safe: [192.0.2.252]", 1))
        ra = ctl(env["MESH2"], "push", a)
        subprocess.run([CLUSTER, "restart-decider", cdir, "1"], check=True, env=env_vars, timeout=60)
        rb = ctl(env["MESH1"], "push", b)
        va = re.search(r"accepted as version (\d+)", ra.stdout)
        vb = re.search(r"accepted as version (\d+)", rb.stdout)
        check(va is not None and vb is not None and int(vb.group(1)) == int(va.group(1)) + 1,
              "A and B get two versions in push order (%s, %s)" % (ra.stdout.strip() or ra.stderr.strip(),
                                                                    rb.stdout.strip() or rb.stderr.strip()))
        histories = wait_for(lambda: (lambda h: h if len(set(h)) == 1 and va and vb and h[0].count("\n") >= int(
            vb.group(1)) else None)([ctl(env["MESH%d" % n], "configs").stdout for n in (1, 2, 3)]), 15, 0.2)
        check(bool(histories), "every decider holds the same config history")
        if histories and va and vb:
            import hashlib
            lines = {int(l.split()[0]): l.split()[1] for l in histories[0].splitlines() if l.strip()}
            check(lines.get(int(va.group(1))) == hashlib.sha256(open(a, "rb").read()).hexdigest() and
                  lines.get(int(vb.group(1))) == hashlib.sha256(open(b, "rb").read()).hexdigest(),
                  "version %s is A and version %s is B on every decider" % (va.group(1), vb.group(1)))
        served = wait_for(lambda: all(("version %s" % (vb.group(1) if vb else "?")) in ctl(env["MESH%d" % n],
                                                                                          "status").stdout
                                      for n in (1, 2, 3)), 15, 0.2)
        check(bool(served), "every decider serves B")

        # 9. No majority: a push fails cleanly; the responders keep answering.
        pid2 = int(open(os.path.join(cdir, "decider2.pid")).read())
        pid3 = int(open(os.path.join(cdir, "decider3.pid")).read())
        os.kill(pid2, signal.SIGSTOP)
        os.kill(pid3, signal.SIGSTOP)
        try:
            # Past the election timeout decider 1 knows it is alone.
            alone = wait_for(lambda: "leader none" in ctl(env["MESH1"], "status").stdout, 15, 0.2)
            check(bool(alone), "decider 1 reports no leader once the others hang")
            c = os.path.join(cdir, "c.yaml")
            open(c, "w").write(cfg.replace("fail_safe: [192.0.2.250]", "fail_safe: [192.0.2.253]", 1))
            r = ctl(env["MESH1"], "push", c, retry_for="3s")
            # It knew no leader: nothing was proposed, so the outcome is known
            # (rc 1), not "may still be applied" (rc 3).
            check(r.returncode == 1 and "nothing was proposed" in r.stderr and "no leader" in r.stderr,
                  "without a majority a push fails with a clear error: rc %d %s" %
                  (r.returncode, r.stderr.strip().splitlines()[-1:]))
            check(dig(env["DNS1"], "www.demo.example") == ["192.0.2.10"], "decider 1's responder keeps answering")
            check("NO MAJORITY" in ctl(env["MESH1"], "status").stdout, "status says there is no majority")
        finally:
            os.kill(pid2, signal.SIGCONT)
            os.kill(pid3, signal.SIGCONT)
        r = ctl(env["MESH1"], "push", c, retry_for="20s")
        check(r.returncode == 0 and "accepted as version" in r.stdout, "with the majority back it is committed")
    finally:
        subprocess.run([CLUSTER, "stop", cdir], env=env_vars, timeout=60)
        if failures:
            for log in sorted(os.listdir(cdir)):
                if log.endswith(".log"):
                    print("---- " + log)
                    print(open(os.path.join(cdir, log)).read()[-2500:])


def main():
    if not shutil.which("dig") or not shutil.which("openssl"):
        print("skip: dig or openssl missing")
        return 77
    work = tempfile.mkdtemp(prefix="gtmesh-control-")
    try:
        plain_decider(work)
        tls_cluster(work)
    finally:
        if failures and os.path.exists(os.path.join(work, "single.log")):
            print("---- single.log")
            print(open(os.path.join(work, "single.log")).read()[-2500:])
        shutil.rmtree(work, ignore_errors=True)
    print("%d check(s) failed" % len(failures) if failures else "all checks passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
