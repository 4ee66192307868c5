#!/usr/bin/env python3
"""A config above the old mesh limits, through a real cluster (issue 42:
"1,000,000 records load, push, replicate, back up and restore").

A config of 1,000,000 records is 364 MB of YAML and 14 MB compressed; real
configs compress less. This test makes one that compresses to about 18 MB
cheaply (the demo config with 24 MB of random comment lines: random text
compresses about 4:3), above the 12 MB an entry could take before and above
the 16 MiB frames older nodes take, and checks with the real binaries on
loopback (tools/cluster.sh: 3 deciders, 3 agents):

  1. `gtmeshctl push` is accepted, and every decider serves the new record
     with the same history (version, SHA-256);
  2. every agent applies the new version (the decider's status lists it);
  3. a decider added afterwards (`member add`), after 70 more entries so
     that the log was compacted past the push, catches up from a snapshot
     holding the config and serves the record;
  4. `gtmeshctl backup` writes a file above 16 MiB that `show-backup`
     reads, and every decider restored from it serves the record with the
     same history;
  5. a text above the loader's 512 MiB is refused by gtmeshctl before
     anything is sent (the sparse file costs no disk).
Each step can fail; the cluster is stopped at the end.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "dns_lib"))
from cluster_helpers import GTMESHCTL, cluster, ctl, history, query, read_env  # noqa: E402
from cluster_helpers import wait_for, with_random_comments, with_record  # noqa: E402
failures = []

BIG = "192.0.2.242"


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    if not ok:
        failures.append(what)
    return ok


def agents_on(mesh, version):
    """The agents the decider's status lists as having applied config `version`."""
    out = ctl(mesh, "status").stdout
    return set(re.findall(r"^  node (\S+) \(dc \S+\): config version %d, applied" % version, out, re.M))


def main():
    if not shutil.which("dig"):
        print("skip: dig is not installed")
        return 77
    work = tempfile.mkdtemp(prefix="gtmesh-large-")
    try:
        cluster("start", work)
        env = read_env(os.path.join(work, "cluster.env"))
        mesh = {n: env["MESH%d" % n] for n in (1, 2, 3)}
        dns = {n: env["DNS%d" % n] for n in (1, 2, 3)}
        text = open(os.path.join(work, "cluster.yaml")).read()
        big = os.path.join(work, "big.yaml")
        with_random_comments(with_record(text, "big", BIG), big, 24)

        # 1. The push and its replication.
        r = ctl(mesh[2], "push", big, timeout=120)
        check(r.returncode == 0 and "accepted as version 2" in r.stdout,
              "a %d MB config that compresses above 16 MiB is pushed: %s" % (
                  os.path.getsize(big) >> 20, (r.stdout + r.stderr).strip()[-300:]))
        ok = wait_for(lambda: all(query(dns[n], "big.demo.example") == (0, [BIG]) for n in dns), 60, 0.2)
        check(ok, "every decider serves the record it added")
        hist = {n: history(mesh[n]) for n in mesh}
        check(all(h == hist[1] and len(h) == 2 for h in hist.values()),
              "with the same history on every decider: %s" % hist[1])

        # 2. The agents take the config frame (above 16 MiB too).
        applied = lambda: set().union(*(agents_on(mesh[n], 2) for n in mesh))  # noqa: E731
        ok = wait_for(lambda: len(applied()) >= 3, 60, 0.5)
        check(ok, "the 3 agents apply version 2: %s" % sorted(applied()))

        # 3. A decider added later catches up from a snapshot holding it.
        for i in range(70):  # snapshots every 32 entries, 16 kept behind: past the push for sure
            r = ctl(mesh[1], "undrain" if i % 2 else "drain", "sin")
            if r.returncode != 0:
                check(False, "drain %d: %s" % (i, (r.stdout + r.stderr).strip()))
                break
        cluster("join-decider", work, "4")
        env = read_env(os.path.join(work, "cluster.env"))
        r = ctl(mesh[1], "member", "add", env["MESH4"], timeout=120)
        check(r.returncode == 0, "decider 4 is added: %s" % (r.stdout + r.stderr).strip()[-200:])
        ok = wait_for(lambda: query(env["DNS4"], "big.demo.example") == (0, [BIG]), 60, 0.2)
        check(ok, "decider 4 serves the record, from a snapshot of the compacted log")
        check(history(env["MESH4"]) == hist[1], "with the same history: %s" % history(env["MESH4"]))

        # 4. Backup and restore.
        backup = os.path.join(work, "cluster.backup")
        r = ctl(mesh[3], "backup", backup, timeout=120)
        size = os.path.getsize(backup) if os.path.exists(backup) else 0
        check(r.returncode == 0 and "config version 2" in r.stdout and size > 16 * 1024 * 1024,
              "gtmeshctl backup writes %d MB: %s" % (size >> 20, (r.stdout + r.stderr).strip()[-200:]))
        shown = subprocess.run([GTMESHCTL, "show-backup", backup], capture_output=True, text=True, timeout=60)
        check(shown.returncode == 0 and "config version 2" in shown.stdout,
              "show-backup reads it: %s" % (shown.stdout + shown.stderr).strip()[-200:])
        cluster("restore", work, backup)  # all 4 deciders, each from the file
        env = read_env(os.path.join(work, "cluster.env"))
        every = [env["DNS%d" % n] for n in (1, 2, 3, 4)]
        ok = wait_for(lambda: all(query(d, "big.demo.example") == (0, [BIG]) for d in every), 60, 0.2)
        check(ok, "every decider restored from it serves the record")
        restored = lambda: [history(env["MESH%d" % n]) for n in (1, 2, 3, 4)]  # noqa: E731
        ok = wait_for(lambda: all(h == hist[1] for h in restored()), 30, 0.5)
        check(ok, "with the history backed up on all 4: %s" % restored())

        # 5. Above the loader's limit: refused before anything is sent.
        huge = os.path.join(work, "huge.yaml")
        with open(huge, "w") as f:
            f.truncate(513 * 1024 * 1024)
        r = ctl(mesh[1], "push", huge)
        check(r.returncode != 0 and "limit is 536870912" in r.stderr,
              "a 513 MiB text is refused, naming the limit: %s" % r.stderr.strip()[-200:])
    finally:
        cluster("stop", work, check=False)
        if not failures:
            shutil.rmtree(work, ignore_errors=True)
    if failures:
        print("%d check(s) failed; files kept in %s" % (len(failures), work))
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
