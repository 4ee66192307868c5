#!/usr/bin/env python3
"""The deciders of a running cluster changed online (docs/mesh.md,
"Changing the deciders"), as an operator does it, with the real binaries
on loopback (tools/cluster.sh): 3 deciders with agents, configs pushed
and fra drained; then

  1. a 4th decider started with --join answers no DNS query (SERVFAIL)
     before it is a member, and says so in its status;
  2. `gtmeshctl member add` through a follower (redirected to the leader)
     makes it a voter: it then answers as the others do (the drain kept),
     and `gtmeshctl configs` on it lists the same history;
  3. `gtmeshctl member remove` of the leader itself: the three left keep
     the drain and the history and commit a new push; the removed decider
     answers SERVFAIL and says why;
  4. `member list` shows three voters; a second add of a decider that
     never started fails with a clear error and leaves the majority alone;
  5. undrain still works: every member answers fra again;
  6. a member whose data folder is lost is removed, started again with
     --join and added: it answers SERVFAIL until it serves the committed
     config with measurements, never the bootstrap config or fail-safe.
Each step can fail; the cluster is stopped at the end.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "dns_lib"))
from cluster_helpers import CLUSTER, FRA, GTMESH, GTMESHCTL, IAD, ctl, history, leader_of, query, read_env  # noqa: E402
from cluster_helpers import wait_for, with_record  # noqa: E402
failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    if not ok:
        failures.append(what)
    return ok


def main():
    if not shutil.which("dig"):
        print("skip: dig is not installed")
        return 77
    work = tempfile.mkdtemp(prefix="gtmesh-membership-")
    try:
        subprocess.run([CLUSTER, "start", work], check=True, stdout=subprocess.DEVNULL, timeout=120,
                       env=dict(os.environ, GTMESH_BIN=GTMESH))
        env = read_env(os.path.join(work, "cluster.env"))
        mesh = {n: env["MESH%d" % n] for n in (1, 2, 3)}
        dns = {n: env["DNS%d" % n] for n in (1, 2, 3)}
        ok = wait_for(lambda: all(query(dns[n], "www.demo.example") == (0, [FRA]) for n in dns), 30)
        check(ok, "three deciders answer www from live measurements")

        # Some history and a drain, as a cluster that has lived a while.
        config = os.path.join(work, "cluster.yaml")
        text = open(config).read()
        for v in range(2, 5):
            pushed = os.path.join(work, "v%d.yaml" % v)
            open(pushed, "w").write(with_record(text, "pushed%d" % v, "192.0.2.%d" % (100 + v)))
            r = ctl(mesh[1 + v % 3], "push", pushed)
            check(r.returncode == 0, "push of version %d: %s" % (v, (r.stdout + r.stderr).strip()))
        r = ctl(mesh[2], "drain", "fra")
        check(r.returncode == 0, "fra drained: %s" % (r.stdout + r.stderr).strip())
        ok = wait_for(lambda: all(query(dns[n], "www.demo.example") == (0, [IAD]) for n in dns), 15)
        check(ok, "every decider answers iad while fra is drained")
        before = history(mesh[1])
        check(len(before) >= 4, "the history holds every version: %d entries" % len(before))

        # 1. A new decider, started to join.
        subprocess.run([CLUSTER, "join-decider", work, "4"], check=True, stdout=subprocess.DEVNULL, timeout=60,
                       env=dict(os.environ, GTMESH_BIN=GTMESH))
        env = read_env(os.path.join(work, "cluster.env"))
        mesh[4], dns[4] = env["MESH4"], env["DNS4"]
        rcode, answers = query(dns[4], "www.demo.example")
        check(rcode == 2 and not answers, "the joining decider answers SERVFAIL before it is a member: rcode %s %s"
              % (rcode, answers))
        status = ctl(mesh[4], "status").stdout
        check("NOT ANSWERING DNS: joining the cluster" in status, "and its status says it is joining")

        # 2. Added through a follower: gtmeshctl follows to the leader.
        leader = leader_of(mesh[1])
        follower = next(m for m in (mesh[1], mesh[2], mesh[3]) if m != leader)
        t0 = time.monotonic()
        r = ctl(follower, "member", "add", mesh[4])
        check(r.returncode == 0 and "done" in r.stdout,
              "member add through a follower (%s): %s (%.1f s)" % (follower, (r.stdout + r.stderr).strip(),
                                                                   time.monotonic() - t0))
        listed = ctl(mesh[1], "member", "list").stdout
        check(len(re.findall(r" voter", listed)) == 4, "four voters:\n" + listed)
        ok = wait_for(lambda: query(dns[4], "www.demo.example") == (0, [IAD]), 20)
        check(ok, "the new decider answers as the others do, the drain kept: %s" % (query(dns[4], "www.demo.example"),))
        check(query(dns[4], "pushed4.demo.example") == (0, ["192.0.2.104"]), "and serves the newest version")
        joined = wait_for(lambda: history(mesh[4]) if len(history(mesh[4])) == len(before) else None, 10)
        check(joined == before, "its config history is the cluster's (%d entries)" % len(joined or []))

        # 3. The leader itself leaves.
        leader = leader_of(mesh[1])
        n_leader = next(n for n, m in mesh.items() if m == leader)
        rest = [n for n in mesh if n != n_leader]
        t0 = time.monotonic()
        r = ctl(mesh[rest[0]], "member", "remove", leader)
        check(r.returncode == 0, "member remove of the leader %s: %s (%.1f s)" % (
            leader, (r.stdout + r.stderr).strip(), time.monotonic() - t0))
        listed = ctl(mesh[rest[0]], "member", "list").stdout
        check(leader not in listed and len(re.findall(r" voter", listed)) == 3, "three voters left:\n" + listed)
        ok = wait_for(lambda: query(dns[n_leader], "www.demo.example")[0] == 2, 10)
        check(ok, "the removed decider answers SERVFAIL")
        status = ctl(leader, "status").stdout
        check("NOT ANSWERING DNS" in status and ("removed" in status or "no longer a voting member" in status),
              "and its status says why")
        pushed = os.path.join(work, "v5.yaml")
        open(pushed, "w").write(with_record(text, "pushed5", "192.0.2.105"))
        r = ctl(mesh[rest[1]], "push", pushed)
        check(r.returncode == 0, "the three left commit a push: %s" % (r.stdout + r.stderr).strip())
        ok = wait_for(lambda: all(query(dns[n], "pushed5.demo.example") == (0, ["192.0.2.105"]) for n in rest), 15)
        check(ok, "every member answers the new record")
        check(all(query(dns[n], "www.demo.example") == (0, [IAD]) for n in rest), "and the drain holds on all three")
        after = history(mesh[rest[0]])
        check(after[:len(before)] == before and len(after) == len(before) + 1, "the history kept every version")

        # 4. A decider that never starts: a clear error, the majority intact.
        r = ctl(mesh[rest[0]], "member", "add", "127.0.0.1:1", timeout=120)
        check(r.returncode != 0 and "did not catch up" in r.stderr, "adding a decider that never runs fails clearly: %s"
              % (r.stdout + r.stderr).strip())
        r = ctl(mesh[rest[0]], "member", "remove", "127.0.0.1:1")
        check(r.returncode == 0, "and it is taken out again: %s" % (r.stdout + r.stderr).strip())

        # 5. Undrain through the new member.
        r = ctl(mesh[4], "undrain", "fra")
        check(r.returncode == 0, "undrain through the decider that joined: %s" % (r.stdout + r.stderr).strip())
        ok = wait_for(lambda: all(query(dns[n], "www.demo.example") == (0, [FRA]) for n in rest), 15)
        check(ok, "every member answers fra again")

        # 6. A member loses its data folder (kill -9, wiped) and comes back
        # with --join: every answer it gives is the cluster's.
        victim = next(n for n in rest if mesh[n] != leader_of(mesh[rest[0]]) and n != 4)
        pid = int(open(os.path.join(work, "decider%d.pid" % victim)).read())
        os.kill(pid, 9)
        shutil.rmtree(os.path.join(work, "decider%d" % victim))
        others = [n for n in rest if n != victim]
        r = ctl(mesh[others[0]], "member", "remove", mesh[victim])
        check(r.returncode == 0, "the member that lost its folder is removed: %s" % (r.stdout + r.stderr).strip())
        subprocess.run([CLUSTER, "join-decider", work, str(victim)], check=True, stdout=subprocess.DEVNULL,
                       timeout=60, env=dict(os.environ, GTMESH_BIN=GTMESH))
        adder = subprocess.Popen([GTMESHCTL, "--decider", mesh[others[0]], "member", "add", mesh[victim]],
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        seen = {}
        deadline = time.monotonic() + 20
        good = None
        while time.monotonic() < deadline:
            for name, want in (("www.demo.example", [FRA]), ("pushed5.demo.example", ["192.0.2.105"])):
                rcode, answers = query(dns[victim], name)
                key = "%s rcode %s %s" % (name, rcode, answers)
                seen[key] = seen.get(key, 0) + 1
            if query(dns[victim], "www.demo.example") == (0, [FRA]) and \
               query(dns[victim], "pushed5.demo.example") == (0, ["192.0.2.105"]):
                good = good or time.monotonic()
                if time.monotonic() - good > 1:
                    break
            time.sleep(0.005)
        wrong = {k: v for k, v in seen.items() if not (" rcode 2 []" in k or k.endswith("rcode 0 ['192.0.2.10']") and
                                                        k.startswith("www") or k.endswith("rcode 0 ['192.0.2.105']"))}
        added = adder.communicate(timeout=90)[0]
        check(adder.returncode == 0, "and added again: %s" % added.strip())
        check(good is not None, "the member that lost its folder serves the cluster's answers again")
        check(not wrong, "and before that it answered SERVFAIL, never the bootstrap config or fail-safe: %s" % seen)
    finally:
        subprocess.run([CLUSTER, "stop", work], timeout=60)
        if failures:
            for name in os.listdir(work):
                if name.endswith(".log") and name.startswith("decider"):
                    print("--- %s (last lines)" % name)
                    print("".join(open(os.path.join(work, name), errors="replace").readlines()[-15:]))
        shutil.rmtree(work, ignore_errors=True)
    print("%d failed" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
