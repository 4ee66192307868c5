#!/usr/bin/env python3
"""Backup and restore as an operator does it (docs/mesh.md, "Backup and
restore"), with the real binaries on loopback (tools/cluster.sh): 3
deciders with agents, configs pushed, fra drained; then

  1. `gtmeshctl backup FILE` through a follower is taken at the leader and
     says what it holds; `show-backup` reads the file back;
  2. a damaged, cut or foreign file is refused by `gtmesh decider
     --restore` with a clear error, and nothing is written to the folder;
  3. every decider is killed and its data folder deleted; each started
     with --restore FILE: the same history, the drain kept (www answers
     iad), the newest pushed record served, and before that no answer but
     SERVFAIL or the cluster's;
  4. the next push is the next version;
  5. a restored decider restarted with the same --restore keeps its newer
     log; one given another backup over its log is refused and changes
     nothing;
  6. `gtmeshctl configs` asked of a decider over and over while it starts
     after kill -9 never lists a short history without saying (on stderr)
     that it is still loading;
  7. a decider restarted with a typo in its --config file's zones serves
     its folder's committed config; a first start with that file fails
     at once, naming the line.
Each step can fail; the cluster is stopped at the end.
"""
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "dns_lib"))
from cluster_helpers import CLUSTER, GTMESH, GTMESHCTL, IAD, cluster, ctl, history, query, read_env  # noqa: E402
from cluster_helpers import leader_of, wait_for, with_record  # noqa: E402
from gtmesh_dns import free_port  # noqa: E402
failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    if not ok:
        failures.append(what)
    return ok


def restore_alone(work, backup):
    """`gtmesh decider --restore BACKUP` into a fresh folder: (exit code, stderr, files written)."""
    folder = tempfile.mkdtemp(prefix="restore-", dir=work)
    port = free_port()
    r = subprocess.run([GTMESH, "decider", "--config", os.path.join(work, "cluster.yaml"), "--data-dir", folder,
                        "--listen", "127.0.0.1:%d" % port, "--restore", backup], capture_output=True, text=True,
                       timeout=30)
    written = [os.path.join(d, f) for d, _, fs in os.walk(folder) for f in fs]
    return r.returncode, r.stderr, written


def kill9(work, n):
    """kill -9 decider N and wait until it is gone (its ports free)."""
    pid = int(open(os.path.join(work, "decider%d.pid" % n)).read())
    os.kill(pid, 9)
    wait_for(lambda: not os.path.exists("/proc/%d" % pid) or
             open("/proc/%d/stat" % pid).read().split()[2] == "Z", 10, step=0.02)


def main():
    if not shutil.which("dig"):
        print("skip: dig is not installed")
        return 77
    work = tempfile.mkdtemp(prefix="gtmesh-backup-")
    try:
        cluster("start", work)
        env = read_env(os.path.join(work, "cluster.env"))
        mesh = {n: env["MESH%d" % n] for n in (1, 2, 3)}
        dns = {n: env["DNS%d" % n] for n in (1, 2, 3)}
        text = open(os.path.join(work, "cluster.yaml")).read()
        for v in (2, 3):
            pushed = os.path.join(work, "v%d.yaml" % v)
            open(pushed, "w").write(with_record(text, "pushed%d" % v, "192.0.2.%d" % (100 + v)))
            r = ctl(mesh[v], "push", pushed)
            check(r.returncode == 0, "push of version %d: %s" % (v, (r.stdout + r.stderr).strip()))
        r = ctl(mesh[1], "drain", "fra")
        check(r.returncode == 0, "fra drained: %s" % (r.stdout + r.stderr).strip())
        ok = wait_for(lambda: all(query(dns[n], "www.demo.example") == (0, [IAD]) for n in dns), 30)
        check(ok, "every decider answers iad while fra is drained")
        before = history(mesh[1])
        check([v for v, _ in before] == ["1", "2", "3"], "the history holds versions 1 to 3: %s" % before)

        # 1. The backup, asked of a follower.
        leader = leader_of(mesh[1])
        follower = next(m for m in mesh.values() if m != leader)
        backup = os.path.join(work, "cluster.backup")
        r = ctl(follower, "backup", backup)
        check(r.returncode == 0 and "config version 3" in r.stdout and "history of 3 version(s)" in r.stdout and
              "drains: fra" in r.stdout and "2 older" in r.stdout,
              "gtmeshctl backup through a follower: %s" % (r.stdout + r.stderr).strip())
        taken_from = next((n for n, m in mesh.items() if m == leader), None)
        check(r.returncode == 0 and ("from decider%s " % taken_from) in r.stdout,
              "and it was taken at the leader (decider%s)" % taken_from)
        shown = subprocess.run([GTMESHCTL, "show-backup", backup], capture_output=True, text=True, timeout=30)
        check(shown.returncode == 0 and shown.stdout.strip() in r.stdout,
              "show-backup reads the same back: %s" % shown.stdout.strip().splitlines()[:1])

        # 2. Files that must not be restored.
        data = open(backup, "rb").read()
        flipped = bytearray(data)
        flipped[len(data) * 2 // 3] ^= 0x01
        bad = {"a flipped bit": bytes(flipped), "a cut file": data[:len(data) - 100],
               "a file of another kind": b"zones: []\n" * 50, "a newer format": data.replace(b"GTMESH-BACKUP 1\n",
                                                                                          b"GTMESH-BACKUP 9\n", 1)}
        expected = {"a flipped bit": "damaged or cut", "a cut file": "damaged or cut",
                    "a file of another kind": "not a gtmesh backup", "a newer format": "newer than this build reads"}
        for what, content in bad.items():
            path = os.path.join(work, "bad.backup")
            open(path, "wb").write(content)
            rc, err, written = restore_alone(work, path)
            check(rc == 1 and expected[what] in err and not written,
                  "--restore refuses %s and writes nothing: rc %d, %s, %d file(s)" % (
                      what, rc, err.strip().splitlines()[-1:] if err.strip() else "", len(written)))

        # 3. Every data folder lost; restored from the file.
        t0 = time.monotonic()
        cluster("restore", work, backup)
        seen = {}
        good = None
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            results = {n: query(dns[n], "www.demo.example") for n in dns}
            for n, (rcode, answers) in results.items():
                key = "rcode %s %s" % (rcode, answers)
                seen[key] = seen.get(key, 0) + 1
            if all(res == (0, [IAD]) for res in results.values()):
                good = good or time.monotonic()
                if time.monotonic() - good > 1:
                    break
            time.sleep(0.01)
        check(good is not None, "the restored deciders answer www with iad: the drain kept (%.1f s after the restore "
              "began)" % ((good or time.monotonic()) - t0))
        wrong = {k: v for k, v in seen.items() if k not in ("rcode 2 []", "rcode 0 ['%s']" % IAD, "rcode None []")}
        check(not wrong, "and before that they answered SERVFAIL or the cluster's answer, never another: %s" % seen)
        after = wait_for(lambda: history(mesh[1]) if len(history(mesh[1])) == 3 else None, 15)
        check(after == before, "the restored history is the one backed up: %s" % after)
        check(all(history(mesh[n]) == before for n in dns), "on every decider")
        check(all(query(dns[n], "pushed3.demo.example") == (0, ["192.0.2.103"]) for n in dns),
              "every decider serves version 3's records")

        # 4. Numbering continues.
        pushed = os.path.join(work, "v4.yaml")
        open(pushed, "w").write(with_record(text, "pushed4", "192.0.2.104"))
        r = ctl(mesh[2], "push", pushed)
        check(r.returncode == 0 and "accepted as version 4" in r.stdout,
              "the next push after the restore is version 4: %s" % (r.stdout + r.stderr).strip())
        ok = wait_for(lambda: all(query(dns[n], "pushed4.demo.example") == (0, ["192.0.2.104"]) for n in dns), 15)
        check(ok, "and every decider serves it")

        # 5. --restore left in place, and a restore over a log.
        kill9(work, 2)
        cluster("restart-decider", work, "2", "--restore", backup)
        log = open(os.path.join(work, "decider2.log")).read()
        check("restored from" in log and "before; starting from its log" in log,
              "a restart with the same --restore starts from the log already there")
        ok = wait_for(lambda: query(dns[2], "pushed4.demo.example") == (0, ["192.0.2.104"]), 20)
        check(ok, "and keeps version 4, newer than the backup")
        other = os.path.join(work, "newer.backup")
        r = ctl(mesh[1], "backup", other)
        check(r.returncode == 0 and "config version 4" in r.stdout, "a second backup holds version 4")
        kill9(work, 3)
        r = cluster("restart-decider", work, "3", "--restore", other, check=False)
        log = open(os.path.join(work, "decider3.log")).read()
        check(r.returncode != 0 and "already holds a Raft log" in log and "nothing was changed" in log,
              "another backup over a decider's log is refused: %s" % log.strip().splitlines()[-1:])
        cluster("restart-decider", work, "3")
        ok = wait_for(lambda: query(dns[3], "pushed4.demo.example") == (0, ["192.0.2.104"]) and
                      query(dns[3], "www.demo.example") == (0, [IAD]), 20)
        check(ok, "and that decider, started again without it, serves its own log: version 4, fra drained")

        # 6. While a decider applies its log again after kill -9, a short
        # history says so (stderr); stdout stays one version per line.
        full = history(mesh[2])
        kill9(work, 1)
        restart = subprocess.Popen([CLUSTER, "restart-decider", work, "1"],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                   env=dict(os.environ, GTMESH_BIN=GTMESH))
        replies, deadline = [], time.monotonic() + 30
        while time.monotonic() < deadline and len(replies) < 2000:
            r = ctl(mesh[1], "--timeout", "1s", "--retry-for", "0s", "configs", timeout=10)
            if r.returncode != 0:
                time.sleep(0.02)
                continue
            listed = [tuple(line.split()[:2]) for line in r.stdout.splitlines()]
            replies.append((listed, "still loading" in r.stderr))
            if listed == full:
                break
        restart.wait(timeout=120)
        unmarked = [(len(l), marked) for l, marked in replies if l != full and not marked]
        check(replies and replies[-1][0] == full and not unmarked,
              "configs during a restart after kill -9: %d replies, %d short, %d marked still loading, none short "
              "without the mark (%s), then the full history of %d versions" %
              (len(replies), sum(1 for l, _ in replies if l != full), sum(1 for _, m in replies if m), unmarked[:3],
               len(full)))

        # 7. A restart serves the folder's committed config: the file's zones
        # are not read (a typo there does not stop it), its other sections
        # are; a first start with that file fails at once, naming the line.
        config = os.path.join(work, "cluster.yaml")
        good = open(config).read()
        check("    records:\n" in good, "the cluster's config has records to break")
        broken = good.replace("    records:\n", "    records:\n      - {name: typo, type: A, answrs: [192.0.2.9]}\n", 1)
        try:
            with open(config, "w") as f:
                f.write(broken)
            kill9(work, 2)
            log_path = os.path.join(work, "decider2.log")
            logged_before = os.path.getsize(log_path) # cluster.sh appends: judge only this start's lines
            cluster("restart-decider", work, "2")
            ok = wait_for(lambda: query(dns[2], "pushed4.demo.example") == (0, ["192.0.2.104"]) and
                          query(dns[2], "www.demo.example") == (0, [IAD]), 30)
            with open(log_path, errors="replace") as f:
                f.seek(logged_before)
                log = f.read()
            check(ok and "the folder holds committed configs (the newest version 4)" in log and "answrs" not in log,
                  "a decider restarted with a typo in its --config file's zones serves its folder's version 4 "
                  "(this start's log: %s)" % log.strip().splitlines()[:2])
            folder = tempfile.mkdtemp(prefix="first-start-", dir=work)
            try:
                r = subprocess.run([GTMESH, "decider", "--config", config, "--data-dir", folder, "--listen",
                                    "127.0.0.1:%d" % free_port()], capture_output=True, text=True, timeout=60)
                rc, err = r.returncode, r.stderr
            except subprocess.TimeoutExpired:
                rc, err = None, "still running after 60 s (it started with a broken config)"
            line = 1 + broken[:broken.index("answrs")].count("\n")
            check(rc == 1 and ("cluster.yaml:%d:" % line) in err and "answrs" in err,
                  "a first start with that file fails at once naming line %d (rc %s: %s)" %
                  (line, rc, err.strip()[-200:]))
        finally:
            with open(config, "w") as f:
                f.write(good)
    finally:
        cluster("stop", work, check=False, timeout=60)
        if failures:
            for name in sorted(os.listdir(work)):
                if name.endswith(".log") and name.startswith("decider"):
                    print("--- %s (last lines)" % name)
                    print("".join(open(os.path.join(work, name), errors="replace").readlines()[-15:]))
        shutil.rmtree(work, ignore_errors=True)
    print("%d failed" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
