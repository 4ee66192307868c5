#!/usr/bin/env python3
"""Mesh timing benchmark (SPEC section 7), on loopback, real processes:

  failover overhead   from the agent's verdict (the measurement time of the
                      failed probe round) to the moment each decider's DNS
                      responder answers the new DC (target < 100 ms)
  config push         from `gtmeshctl push` to its acknowledgement (a majority
                      of deciders has it on disk: the Raft commit), to every
                      decider answering the new record and every agent
                      reporting the version applied (target < 1 s for 10 nodes)

    tools/bench/mesh_bench.py [--deciders 4] [--agents-per-dc 2] [--rounds 5] [--breakdown]

--breakdown runs every node with --log-level debug and reads the
"failover-trace" lines each process writes on the failover path (agent
sends a batch; a decider takes in the flip from its agent or from a peer,
builds its snapshot, its responder serves it) to say where the time goes.

4 deciders + 3 DCs x 2 agent instances = 10 nodes by default. Prints medians
and the individual samples; results go in docs/benchmarks.md.
"""
import argparse
import json
import os
import random
import socket
import sys
import struct
import re
import shutil
import signal
import statistics
import subprocess
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from free_port import free_port  # noqa: E402

SRC = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
GTMESH = os.environ.get("GTMESH_BIN", os.path.join(SRC, "build", "tools", "gtmesh"))
GTMESHCTL = os.path.join(os.path.dirname(GTMESH), "gtmeshctl")


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


def ctl(mesh, *args, timeout=30):
    return subprocess.run([GTMESHCTL, "--decider", mesh, *args], capture_output=True, text=True, timeout=timeout)


class cluster:
    def __init__(self, work, deciders, agents_per_dc, debug=False, extra_records=0):
        self.work, self.procs, self.dns, self.mesh = work, [], [], []
        self.logs = {}  # process name -> its stderr file
        extra = ["--log-level", "debug"] if debug else []
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
        if extra_records:
            # More DC-mode records like www: a failover of fra re-ranks them all.
            lines = ["      - {name: r%d, type: A, ttl: 5, dc: {source: service, service: web, metric: healthyBackends, "
                     "answers: {fra: [10.1.%d.%d], iad: [10.2.%d.%d], sin: [10.3.%d.%d]}}}"
                     % (i, i // 250 % 250, i % 250 + 1, i // 250 % 250, i % 250 + 1, i // 250 % 250, i % 250 + 1)
                     for i in range(extra_records)]
            text = text.replace("    records:\n", "    records:\n" + "\n".join(lines) + "\n", 1)
        self.config = os.path.join(work, "cluster.yaml")
        open(self.config, "w").write(text)
        # Every decider names every other (Raft membership): addresses first.
        self.mesh = ["127.0.0.1:%d" % free_port() for _ in range(deciders)]
        for n in range(deciders):
            pf = os.path.join(work, "d%d.ports" % n)
            peers = sum((["--peer", m] for m in self.mesh if m != self.mesh[n]), [])
            self.spawn([GTMESH, "decider", "--config", self.config, "--data-dir", os.path.join(work, "d%d" % n),
                        "--listen", self.mesh[n], "--name", "d%d" % n, "--dns", "127.0.0.1:0", "--port-file", pf,
                        *peers, *extra], "d%d" % n)
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
                            "--quiet", "--decider", first, *rest, *extra], "%s-a%d" % (dc, i))
        self.nodes = deciders + 3 * agents_per_dc

    def spawn(self, argv, name="log"):
        path = os.path.join(self.work, name + ".log")
        self.logs[name] = path
        self.procs.append(subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=open(path, "a")))

    def stages(self, name, since_us):
        """(stage, details, t_us) of the failover-trace lines `name` wrote after since_us."""
        out = []
        for line in open(self.logs[name], errors="replace"):
            m = re.search(r"failover-trace (\S+) (.*) t_us=(\d+)", line)
            if m and int(m.group(3)) >= since_us:
                out.append((m.group(1), m.group(2), int(m.group(3))))
        return out

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


def breakdown(c, verdict_ms, answered):
    """Where one failover's time went, in ms after the verdict of the agent
    whose batch carried the deciding flip (its probe round's measurement
    time, ms resolution): the agent sends, each decider takes the flip in
    (from that agent or from a peer), builds its snapshot, its responder
    serves it, and the poller sees the answer."""
    # The flip that changed the answer is the last one a decider took in
    # before its responder answered the new DC (a DC's agents each flip in
    # turn; the DC fails when the value the deciders hold says so). The
    # verdict the bench reads is rebased by the decider (transit added), so
    # the agent's own measurement time is at most that.
    since = verdict_ms * 1000 - 50_000
    first = None  # (t_us, decider, origin, max_seq) of the first batch that flipped
    per = {}
    for n in range(len(c.mesh)):
        st = c.stages("d%d" % n, since)
        flips = [(s, d, t) for s, d, t in st if s in ("batch", "delta") and t <= answered[n] * 1e6]
        flip = flips[-1] if flips else None
        if not flip:
            continue
        built = next((t for s, d, t in st if s == "snapshot" and t >= flip[2]), None)
        serving = next((t for s, d, t in st if s == "serving" and t >= flip[2]), None)
        per[n] = (flip, built, serving)
        if flip[0] == "batch":
            m = re.search(r"origin=(\S+) max_seq=(\d+)", flip[1])
            if m and (first is None or flip[2] < first[0]):
                first = (flip[2], n, m.group(1), m.group(2))
    if first is None:
        return None
    dc, inst = first[2].split("/")
    send = next(((t, int(re.search(r"newest_ms=(\d+)", d).group(1))) for s, d, t in c.stages("%s-%s" % (dc, inst), since)
                 if s == "agent-send" and ("max_seq=%s " % first[3]) in d + " "), None)
    if send is None:
        return None
    t0 = send[1] * 1000  # the verdict of the agent that told first
    ms = lambda t: None if t is None else (t - t0) / 1000
    row = {"agent sends": ms(send[0]), "deciders": []}
    for n, (flip, built, serving) in sorted(per.items()):
        row["deciders"].append({"via": "agent" if flip[0] == "batch" else "peer", "flip in": ms(flip[2]),
                                "built": ms(built), "serving": ms(serving),
                                "answered": ms(answered[n] * 1e6)})
    return row


def print_breakdown(rows):
    def med(xs):
        xs = [x for x in xs if x is not None]
        return "%.1f" % statistics.median(xs) if xs else "-"
    print("breakdown, ms after the verdict of the agent whose flip decided (medians over %d rounds):" % len(rows))
    print("  agent sends the batch: %s" % med(r["agent sends"] for r in rows))
    for via in ("agent", "peer"):
        ds = [d for r in rows for d in r["deciders"] if d["via"] == via]
        if ds:
            print("  deciders told by %s (%d): flip taken in %s, snapshot built %s, responder serving %s,"
                  " answer seen by the poller %s" % (via, len(ds), med(d["flip in"] for d in ds),
                                                     med(d["built"] for d in ds), med(d["serving"] for d in ds),
                                                     med(d["answered"] for d in ds)))
    for i, r in enumerate(rows):
        print("  round %d: agent sends %.2f; %s" % (i, r["agent sends"], "; ".join(
            "%s: in %.2f, built %.2f, serving %.2f, answered %.1f" % (d["via"], d["flip in"], d["built"] or -1,
                                                                    d["serving"] or -1, d["answered"])
            for d in r["deciders"])))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--deciders", type=int, default=4)
    ap.add_argument("--agents-per-dc", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--breakdown", action="store_true", help="trace the failover path's stages (debug logs)")
    ap.add_argument("--extra-records", type=int, default=0,
                    help="add N DC-mode records beside www (100000: the failover at scale)")
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="gtmesh-mesh-bench-")
    c = cluster(work, args.deciders, args.agents_per_dc, args.breakdown, args.extra_records)
    breakdowns = []
    try:
        until_all(c.dns, "www.demo.example", ["192.0.2.10"], 60 + args.extra_records / 5000)
        failover, push = [], []
        for r in range(args.rounds):
            down = os.path.join(work, "down-fra")
            open(down, "w").close()
            changed = until_all(c.dns, "www.demo.example", ["198.51.100.10"])
            verdict_ms = verdict_time_ms(c.mesh[0], "fra")
            verdict = verdict_ms / 1000.0
            failover.append([1000 * (t - verdict) for t in changed])
            if args.breakdown:
                time.sleep(0.2)  # the last log lines reach their files
                row = breakdown(c, verdict_ms, changed)
                if row:
                    breakdowns.append(row)
            os.remove(down)
            until_all(c.dns, "www.demo.example", ["192.0.2.10"])
            # Config push: one new record per round.
            text = open(c.config).read()
            name = "pushed%d" % r
            new = os.path.join(work, "v%d.yaml" % (r + 2))
            open(new, "w").write(text.replace("      - {name: api,", "      - {name: %s, type: A, ttl: 5, answers: "
                                              "[192.0.2.%d]}\n      - {name: api," % (name, 100 + r), 1))
            start = time.time()
            # A load takes about 8 s of CPU per 1,000,000 records (docs/benchmarks.md).
            slack = args.extra_records / 5000
            out = ctl(c.mesh[r % len(c.mesh)], "push", new, timeout=30 + slack)
            acked = time.time()
            m = re.search(r"version (\d+)", out.stdout)
            if not m:
                raise RuntimeError("push refused: %s" % (out.stdout + out.stderr).strip()[-600:])
            version = m.group(1)
            until_all(c.dns, name + ".demo.example", ["192.0.2.%d" % (100 + r)], 10 + slack)
            deciders_done = time.time()
            agents = 0
            deadline = time.monotonic() + 10 + slack
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
        if breakdowns:
            print_breakdown(breakdowns)
        print("config push -> acknowledged (committed by a majority, gtmeshctl's own start included) (ms): median %.0f"
              % statistics.median(p[3] for p in push))
        print("config push -> every decider answers (ms): median %.0f; -> every agent reported applied: median %.0f"
              " (status polling adds up to ~100 ms); samples %s"
              % (statistics.median(p[0] for p in push), statistics.median(p[1] for p in push),
                 [("%.0f" % a, "%.0f" % b, n) for a, b, n, _ in push]))
    finally:
        c.stop()
        if os.environ.get("KEEP"):
            print("kept: " + work)
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
