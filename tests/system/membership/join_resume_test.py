#!/usr/bin/env python3
"""A decider killed (-9) in the middle of joining, restarted on its folder
with the same flags, finishes joining; one removed while it was down stops
answering when it comes back (docs/mesh.md, "Changing the deciders";
issue 41 items 7 and 11). The real binaries on loopback (tools/cluster.sh):
3 deciders, fra drained, a log long enough to be compacted (a new decider
is sent a snapshot). Each point is made deterministic with what the
operator has (kill -9, the joiner's own fault hooks), not with timing:

  A. killed before `member add`, which is then issued while it is dead;
     restarted, the add in flight (or the next one) completes;
  B. killed after it stored the snapshot, before the leader heard (its
     answers to the leader held back 1.5 s by its fault hooks): restarted,
     the add in flight (or the next one) completes within libraft's
     catch-up round, not after its 30 s snapshot timeout (it was "did not
     catch up" twice, a spare until then);
  C. killed right after `member add` returned (a voter at the leader,
     perhaps not yet in its own log): restarted, it is a voter;
  each then answers DNS as the others do (iad: the drain kept), its status
  names the leader every member names, and the member list has it a voter;
  D. a voter killed, removed while it is dead, restarted: it answers
     SERVFAIL within a few election timeouts (a member tells it), its status
     says it was removed, the member list stays without it, and restarted
     once more it answers SERVFAIL within half an election timeout (before
     it could have asked anyone: it kept that in its folder).
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "dns_lib"))
from cluster_helpers import CLUSTER, GTMESH, GTMESHCTL, IAD, ctl, leader_of, query, read_env  # noqa: E402
from cluster_helpers import wait_for  # noqa: E402
failures = []

# libraft's catch-up round gives up on a decider after 5 s without
# progress; a join that resumes does it within that and one more add.
RESUME_BOUND_S = 15
# A member learns the leader from its first heartbeat once their link is
# back: the mesh reconnect (at most 5 s between attempts, core/decider/
# actor/links.cpp) + an election timeout (1 s) + slack.
LEADER_BOUND_S = 8


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    if not ok:
        failures.append(what)
    return ok


def main():
    if not shutil.which("dig"):
        print("skip: dig is not installed")
        return 77
    work = tempfile.mkdtemp(prefix="gtmesh-join-resume-")
    env_bin = dict(os.environ, GTMESH_BIN=GTMESH)

    def cluster(*args):
        subprocess.run([CLUSTER, *args], check=True, stdout=subprocess.DEVNULL, timeout=60, env=env_bin)

    def kill9(n):
        pid = int(open(os.path.join(work, "decider%d.pid" % n)).read())
        os.kill(pid, 9)
        wait_for(lambda: not os.path.exists("/proc/%d" % pid) or
                 open("/proc/%d/stat" % pid).read().split()[2] == "Z", 10, 0.02)

    def members(via):
        out = ctl(via, "member", "list").stdout
        return dict(re.findall(r"^(\S+) (voter|standby|spare)", out, re.M))

    def add_in_background(via, address):
        return subprocess.Popen([GTMESHCTL, "--decider", via, "--retry-for", "10", "member", "add", address],
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)

    def resumed(n, adder, restarted_at, mesh, dns, what):
        """The add in flight, or the operator's next one, makes decider n a
        voter within RESUME_BOUND_S of its restart; then it answers and
        names the right leader."""
        first = adder.communicate(timeout=90)[0].strip()
        if adder.returncode != 0:
            print("     the add in flight ended: %s" % first)
            r = ctl(mesh[1], "member", "add", mesh[n])
            first += " / again: rc %d %s" % (r.returncode, (r.stdout + r.stderr).strip())
        took = time.monotonic() - restarted_at
        role = members(mesh[1]).get(mesh[n])
        check(role == "voter" and took < RESUME_BOUND_S,
              "%s: restarted, it became a voter in %.1f s (bound %d s): %s; %s" % (
                  what, took, RESUME_BOUND_S, role, first))
        ok = wait_for(lambda: query(dns[n], "www.demo.example") == (0, [IAD]), 15)
        check(bool(ok), "%s: it answers as the others do (the drain kept): %s" % (
            what, query(dns[n], "www.demo.example"),))
        # Restarted on its folder it answers from what it kept at once; the
        # leader's first message (a heartbeat once its link is back) tells it
        # who leads: within LEADER_BOUND_S, polled, not read once.
        leader = leader_of(mesh[1])
        seen = {}

        def names_leader():
            seen["st"] = ctl(mesh[n], "status").stdout
            m = re.search(r"consensus: \w+, .*leader (\S+)", seen["st"])
            seen["named"] = m
            return leader is not None and m is not None and m.group(1) == leader

        started = time.monotonic()
        ok = wait_for(names_leader, LEADER_BOUND_S, 0.1)
        named, st = seen.get("named"), seen.get("st", "")
        check(bool(ok), "%s: its status names the leader %s within %d s (%s): %s" % (
            what, leader, LEADER_BOUND_S, "%.1f s" % (time.monotonic() - started) if ok else "not",
            named.group(0) if named else st[-300:]))
        check("NOT ANSWERING DNS" not in st, "%s: and says nothing of joining" % what)

    try:
        cluster("start", work)
        env = read_env(os.path.join(work, "cluster.env"))
        mesh = {n: env["MESH%d" % n] for n in (1, 2, 3)}
        dns = {n: env["DNS%d" % n] for n in (1, 2, 3)}
        # A log long enough to be compacted (a snapshot every 32 entries).
        for i in range(17):
            r1 = ctl(mesh[1 + i % 3], "drain", "fra")
            r2 = ctl(mesh[1 + i % 3], "undrain", "fra")
            if r1.returncode or r2.returncode:
                check(False, "drain/undrain %d: %s" % (i, (r1.stdout + r1.stderr + r2.stdout + r2.stderr).strip()))
        r = ctl(mesh[2], "drain", "fra")
        check(r.returncode == 0, "fra drained: %s" % (r.stdout + r.stderr).strip())
        ok = wait_for(lambda: all(query(dns[n], "www.demo.example") == (0, [IAD]) for n in dns), 20)
        check(bool(ok), "three deciders answer iad (fra drained)")

        # A. Killed before the add; the add is issued while it is dead.
        cluster("join-decider", work, "4")
        env = read_env(os.path.join(work, "cluster.env"))
        mesh[4], dns[4] = env["MESH4"], env["DNS4"]
        ok = wait_for(lambda: "NOT ANSWERING DNS: joining the cluster" in ctl(mesh[4], "status").stdout, 10)
        check(bool(ok), "A: decider4 runs with --join and says it is joining")
        kill9(4)
        adder = add_in_background(mesh[1], mesh[4])
        ok = wait_for(lambda: members(mesh[1]).get(mesh[4]) == "spare", 10, 0.05)
        check(bool(ok), "A: member add made the dead decider4 a spare being caught up")
        cluster("restart-decider", work, "4", "--join")
        resumed(4, adder, time.monotonic(), mesh, dns, "A (killed before its add)")

        # B. Killed after it stored the snapshot, before the leader heard.
        cluster("join-decider", work, "5")
        env = read_env(os.path.join(work, "cluster.env"))
        mesh[5], dns[5] = env["MESH5"], env["DNS5"]
        leader = leader_of(mesh[1])
        # Its answers reach the leader 1.5 s late: the leader learns it needs
        # the snapshot, sends it, and the answer that it was stored is still
        # held in decider5 when it is killed.
        r = ctl(mesh[5], "fault", leader, "delay=1500ms")
        check(r.returncode == 0, "B: decider5's messages to the leader are held 1.5 s: %s" % (
            r.stdout + r.stderr).strip())
        adder = add_in_background(mesh[1], mesh[5])

        def applied(n):
            m = re.search(r"consensus: \w+, term \d+, commit \d+, applied (\d+)", ctl(mesh[n], "status").stdout)
            return int(m.group(1)) if m else 0

        ok = wait_for(lambda: applied(5) > 0, 10, 0.05)
        check(bool(ok), "B: decider5 installed the leader's snapshot (applied %d)" % applied(5))
        kill9(5)
        cluster("restart-decider", work, "5", "--join")
        resumed(5, adder, time.monotonic(), mesh, dns, "B (killed after storing the snapshot)")

        # C. Killed right after its add returned.
        cluster("join-decider", work, "6")
        env = read_env(os.path.join(work, "cluster.env"))
        mesh[6], dns[6] = env["MESH6"], env["DNS6"]
        r = ctl(mesh[1], "member", "add", mesh[6])
        check(r.returncode == 0, "C: member add decider6: %s" % (r.stdout + r.stderr).strip())
        kill9(6)
        adder = add_in_background(mesh[1], mesh[6])  # a retried add: done already
        cluster("restart-decider", work, "6", "--join")
        resumed(6, adder, time.monotonic(), mesh, dns, "C (killed once a voter)")

        # D. Removed while it was dead.
        kill9(6)
        t0 = time.monotonic()
        r = ctl(mesh[1], "member", "remove", mesh[6])
        check(r.returncode == 0, "D: the dead decider6 is removed in %.1f s: %s" % (
            time.monotonic() - t0, (r.stdout + r.stderr).strip()))
        cluster("restart-decider", work, "6", "--join")
        t0 = time.monotonic()
        ok = wait_for(lambda: query(dns[6], "www.demo.example")[0] == 2, 10, 0.05)
        check(bool(ok), "D: restarted, it answers SERVFAIL within %.1f s" % (time.monotonic() - t0))
        st = ctl(mesh[6], "status").stdout
        check("NOT ANSWERING DNS: removed from the cluster" in st, "D: its status says it was removed:\n" +
              "\n".join(line for line in st.splitlines() if "NOT ANSWERING" in line or "consensus:" in line))
        check(mesh[6] not in members(mesh[1]), "D: the member list is without it: %s" % members(mesh[1]))
        # Started once more it knows from its folder, before it could have
        # asked anyone (its first vote request goes out an election timeout,
        # 1 s, after the start at the earliest). Until its consensus log is
        # open it answers from last-known-good, as any restarted decider.
        kill9(6)
        cluster("restart-decider", work, "6", "--join")
        t0 = time.monotonic()
        first = query(dns[6], "www.demo.example")
        ok = wait_for(lambda: query(dns[6], "www.demo.example")[0] == 2, 5, 0.02)
        took = time.monotonic() - t0
        check(bool(ok) and took < 0.5, "D: restarted once more, it answers SERVFAIL %.2f s after its start, well "
              "before it could have asked anyone: it kept that it was removed (first answer %s)" % (took, first))
        check(all(query(dns[n], "www.demo.example") == (0, [IAD]) for n in (1, 2, 3, 4, 5)),
              "the five members answer iad")
    finally:
        subprocess.run([CLUSTER, "stop", work], timeout=60)
        if failures:
            for name in sorted(os.listdir(work)):
                if name.endswith(".log") and name.startswith("decider"):
                    print("--- %s (last lines)" % name)
                    print("".join(open(os.path.join(work, name), errors="replace").readlines()[-12:]))
        shutil.rmtree(work, ignore_errors=True)
    print("%d failed" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
