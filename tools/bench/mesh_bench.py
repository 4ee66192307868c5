#!/usr/bin/env python3
"""Mesh timing benchmark (SPEC section 7), on loopback, real processes:

  failover overhead   from the agent's verdict (the measurement time of the
                      failed probe round) to the moment each decider's DNS
                      responder answers the new DC (target < 100 ms)
  config push         from `gtmeshctl push` to its acknowledgement (a majority
                      of deciders has it on disk: the Raft commit), to every
                      decider answering the new record and every agent
                      reporting the version applied (target < 1 s for 10 nodes)

    tools/bench/mesh_bench.py [--deciders 4] [--agents-per-dc 2] [--rounds 5]

4 deciders + 3 DCs x 2 agent instances = 10 nodes by default. Prints medians
and the individual samples; results go in docs/benchmarks.md.
"""
import argparse
import json
import os
import random
import socket
import struct
import re
import shutil
import signal
import statistics
import subprocess
import tempfile
import time

SRC = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
GTMESH = os.environ.get("GTMESH_BIN", os.path.join(SRC, "build", "tools", "gtmesh"))
GTMESHCTL = os.path.join(os.path.dirname(GTMESH), "gtmeshctl")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_file(path, seconds=30):
    deadline = time.monotonic() + seconds
    while not (os.path.exists(path) and os.path.getsize(path) > 0):
        if time.monotonic() > deadline:
            raise RuntimeError("timed out waiting for " + path)
        time.sleep(0.02)


def dig(server, name):
    """A minimal UDP A query (the bench polls every responder every few ms;
    spawning dig would take ~40 ms per query and blur the timing)."""
    host, port = server.rsplit(":", 1)
    qid = random.randrange(65536)
    q = struct.pack(">HHHHHH", qid, 0x0100, 1, 0, 0, 0)
    for label in name.rstrip(".").split("."):
        q += bytes([len(label)]) + label.encode()
    q += b"\0" + struct.pack(">HH", 1, 1)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.settimeout(1)
        s.sendto(q, (host, int(port)))
        try:
            r = s.recv(4096)
        except socket.timeout:
            return []
    an = struct.unpack(">H", r[6:8])[0]
    pos = len(q)  # the question is echoed
    out = []
    for _ in range(an):
        pos += 2 if r[pos] & 0xC0 == 0xC0 else r.index(0, pos) + 1 - pos
        rtype, _, _, rdlen = struct.unpack(">HHIH", r[pos:pos + 10])
        pos += 10
        if rtype == 1:
            out.append(socket.inet_ntoa(r[pos:pos + 4]))
        pos += rdlen
    return sorted(out)


def ctl(mesh, *args):
    return subprocess.run([GTMESHCTL, "--decider", mesh, *args], capture_output=True, text=True, timeout=30)


class cluster:
    def __init__(self, work, deciders, agents_per_dc):
        self.work, self.procs, self.dns, self.mesh = work, [], [], []
        ports = {}
        for dc in ("fra", "iad", "sin"):
            for i in (1, 2):
                pf = os.path.join(work, "b-%s-%d.port" % (dc, i))
                self.spawn([GTMESH, "backend", "--listen", "127.0.0.1:0", "--down-file",
                            os.path.join(work, "down-" + dc), "--port-file", pf])
                wait_file(pf)
                ports["@%s%d@" % (dc.upper(), i)] = open(pf).read().strip()
        text = open(os.path.join(SRC, "configs", "cluster.yaml.in")).read()
        for k, v in ports.items():
            text = text.replace(k, v)
        text = text.replace("@MMDB@", os.path.join(SRC, "tests", "data", "test.mmdb"))
        self.config = os.path.join(work, "cluster.yaml")
        open(self.config, "w").write(text)
        # Every decider names every other (Raft membership): addresses first.
        self.mesh = ["127.0.0.1:%d" % free_port() for _ in range(deciders)]
        for n in range(deciders):
            pf = os.path.join(work, "d%d.ports" % n)
            peers = sum((["--peer", m] for m in self.mesh if m != self.mesh[n]), [])
            self.spawn([GTMESH, "decider", "--config", self.config, "--data-dir", os.path.join(work, "d%d" % n),
                        "--listen", self.mesh[n], "--name", "d%d" % n, "--dns", "127.0.0.1:0", "--port-file", pf,
                        *peers])
        for n in range(deciders):
            pf = os.path.join(work, "d%d.ports" % n)
            wait_file(pf)
            info = dict(line.split() for line in open(pf))
            self.dns.append(info["dns"])
        for dc_index, dc in enumerate(("fra", "iad", "sin")):
            for i in range(agents_per_dc):
                first = self.mesh[(dc_index * agents_per_dc + i) % deciders]
                rest = sum((["--decider", m] for m in self.mesh if m != first), [])
                self.spawn([GTMESH, "agent", "--config", self.config, "--dc", dc, "--instance", "a%d" % i,
                            "--quiet", "--decider", first, *rest])
        self.nodes = deciders + 3 * agents_per_dc

    def spawn(self, argv):
        self.procs.append(subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=open(
            os.path.join(self.work, "log"), "a")))

    def stop(self):
        for p in self.procs:
            p.send_signal(signal.SIGTERM)
        for p in self.procs:
            try:
                p.wait(timeout=15)
            except subprocess.TimeoutExpired:
                p.kill()


def until_all(servers, name, want, seconds=20, step=0.001):
    """Wall-clock time (Unix s) at which each server first answered `want`."""
    seen = {}
    deadline = time.monotonic() + seconds
    while len(seen) < len(servers) and time.monotonic() < deadline:
        for s in servers:
            if s not in seen and dig(s, name) == want:
                seen[s] = time.time()
        time.sleep(step)
    if len(seen) < len(servers):
        raise RuntimeError("not every responder answered %s %s" % (name, want))
    return [seen[s] for s in servers]


def verdict_time_ms(mesh, dc):
    trace = json.loads(ctl(mesh, "explain", "www.demo.example", "A", "--json").stdout)
    for step in trace["steps"]:
        if step.get("candidate") == dc and "at_ms" in step:
            return step["at_ms"]
    raise RuntimeError("no measurement time for " + dc)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--deciders", type=int, default=4)
    ap.add_argument("--agents-per-dc", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="gtmesh-mesh-bench-")
    c = cluster(work, args.deciders, args.agents_per_dc)
    try:
        until_all(c.dns, "www.demo.example", ["192.0.2.10"], 60)
        failover, push = [], []
        for r in range(args.rounds):
            down = os.path.join(work, "down-fra")
            open(down, "w").close()
            changed = until_all(c.dns, "www.demo.example", ["198.51.100.10"])
            verdict = verdict_time_ms(c.mesh[0], "fra") / 1000.0
            failover.append([1000 * (t - verdict) for t in changed])
            os.remove(down)
            until_all(c.dns, "www.demo.example", ["192.0.2.10"])
            # Config push: one new record per round.
            text = open(c.config).read()
            name = "pushed%d" % r
            new = os.path.join(work, "v%d.yaml" % (r + 2))
            open(new, "w").write(text.replace("      - {name: api,", "      - {name: %s, type: A, ttl: 5, answers: "
                                              "[192.0.2.%d]}\n      - {name: api," % (name, 100 + r), 1))
            start = time.time()
            out = ctl(c.mesh[r % len(c.mesh)], "push", new)
            acked = time.time()
            version = re.search(r"version (\d+)", out.stdout).group(1)
            until_all(c.dns, name + ".demo.example", ["192.0.2.%d" % (100 + r)], 10)
            deciders_done = time.time()
            agents = 0
            deadline = time.monotonic() + 10
            while agents < 3 * args.agents_per_dc and time.monotonic() < deadline:
                status = "".join(ctl(m, "status").stdout for m in c.mesh)
                agents = len(set(re.findall(r"node (\S+) \(dc \w+\): config version %s, applied" % version, status)))
            all_done = time.time()
            push.append((1000 * (deciders_done - start), 1000 * (all_done - start), agents, 1000 * (acked - start)))
            c.config = new
        worst = [max(s) for s in failover]
        print("nodes: %d deciders + %d agents" % (args.deciders, 3 * args.agents_per_dc))
        print("failover, verdict -> every responder answers (ms): median of worst %.1f, samples %s"
              % (statistics.median(worst), [["%.1f" % x for x in s] for s in failover]))
        print("config push -> acknowledged (committed by a majority, gtmeshctl's own start included) (ms): median %.0f"
              % statistics.median(p[3] for p in push))
        print("config push -> every decider answers (ms): median %.0f; -> every agent reported applied: median %.0f"
              " (status polling adds up to ~100 ms); samples %s"
              % (statistics.median(p[0] for p in push), statistics.median(p[1] for p in push),
                 [("%.0f" % a, "%.0f" % b, n) for a, b, n, _ in push]))
    finally:
        c.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
