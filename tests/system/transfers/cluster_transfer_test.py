#!/usr/bin/python3
"""System test: zone transfers from the deciders' responders (tools/cluster.sh,
three deciders). A pushed config gives demo.example `transfer:` (view
fail_safe); every decider then transfers the zone by AXFR with the same
serial, the committed config version, and the same records; a transfer from
127.0.0.2 is refused. A push adding one record: decider 1 sends IXFR from
serial 2 as that change alone, and again after it is killed (kill -9) and
restarted: its journal comes back from its RocksDB store.
"""

import os
import shutil
import signal
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "dns_lib"))
from cluster_helpers import DEMO_NS_LINE, cluster, ctl, decider_addresses, wait_for  # noqa: E402
from gtmesh_dns import Checks, kdig  # noqa: E402


def records(out):
    rows = []
    for line in out.splitlines():
        if line.strip() and not line.startswith(";"):
            f = line.split()
            rows.append((f[0].lower(), f[1], f[3], " ".join(f[4:])))
    return rows


def main():
    t = Checks("dns_transfers_cluster")
    work = tempfile.mkdtemp(prefix="gtmesh-xfr-cluster-")
    started = False
    try:
        cluster("start", work)
        started = True
        mesh, dns = decider_addresses(work)
        text = open(os.path.join(work, "cluster.yaml")).read()
        anchor = DEMO_NS_LINE
        t.check(anchor in text, "the cluster config has demo.example's ns line")
        pushed = os.path.join(work, "v2.yaml")
        open(pushed, "w").write(text.replace(anchor, anchor + "    transfer: {view: fail_safe, allow: [127.0.0.1]}\n", 1))
        r = ctl(mesh[1], "push", pushed)
        t.check(r.returncode == 0, "push of version 2 with transfer:", (r.stdout + r.stderr).strip())

        def axfr(n):
            host, port = dns[n]
            return records(kdig(host, port, "AXFR", "demo.example"))

        def serial_2_everywhere():
            got = {n: axfr(n) for n in dns}
            ok = all(len(g) >= 2 and g[0][2] == "SOA" and g[0][3].split()[2] == "2" for g in got.values())
            return got if ok else None

        got = wait_for(serial_2_everywhere, 30)
        t.check(got is not None, "every decider transfers demo.example with serial 2 (the committed version)")
        if got:
            t.equal(sorted(got[2]), sorted(got[1]), "decider 2 transfers what decider 1 does")
            t.equal(sorted(got[3]), sorted(got[1]), "decider 3 transfers what decider 1 does")
            t.check(got[1][-1] == got[1][0], "SOA first and last")
            t.check(any(r[0] == "ns1.demo.example." and r[2] == "A" for r in got[1]), "the static records are in it")
        host, port = dns[2]
        out = kdig(host, port, "-b", "127.0.0.2", "AXFR", "demo.example")
        t.check("REFUSED" in out, "a transfer from 127.0.0.2 is refused by decider 2", out)

        # The IXFR journal survives a restart. The AXFRs above noted version
        # 2 at every decider; version 3 adds one record.
        pushed3 = os.path.join(work, "v3.yaml")
        ns1 = "      - {name: ns1, type: A, answers: [127.0.0.1]}\n"
        text2 = open(pushed).read()
        t.check(ns1 in text2, "the cluster config has ns1's record")
        open(pushed3, "w").write(text2.replace(ns1, ns1 + "      - {name: added, type: A, answers: [192.0.2.77]}\n", 1))
        r = ctl(mesh[1], "push", pushed3)
        t.check(r.returncode == 0, "push of version 3, one record added", (r.stdout + r.stderr).strip())

        def ixfr_from_2():
            host, port = dns[1]
            got = records(kdig(host, port, "IXFR=2", "demo.example"))
            return got if got and got[0][2] == "SOA" and got[0][3].split()[2] == "3" else None

        before = wait_for(ixfr_from_2, 30)
        soa3 = before[0] if before else None
        t.check(before is not None and len(before) == 5 and before[1][2] == "SOA" and before[1][3].split()[2] == "2"
                and before[2] == soa3 and before[4] == soa3 and before[3][0] == "added.demo.example." and
                before[3][3] == "192.0.2.77",
                "IXFR from 2 at decider 1: SOA 3, SOA 2, SOA 3, the record added, SOA 3 (the change alone)",
                str(before))
        pid = int(open(os.path.join(work, "decider1.pid")).read())
        os.kill(pid, signal.SIGKILL)
        wait_for(lambda: not os.path.exists("/proc/%d" % pid) or
                 open("/proc/%d/stat" % pid).read().split()[2] == "Z", 10, 0.02)
        cluster("restart-decider", work, "1")
        after = wait_for(ixfr_from_2, 60)
        t.equal(after, before, "after kill -9 and a restart, decider 1 sends the same IXFR from 2: its journal "
                               "came back from its store (not the whole zone)")
    except Exception as e:  # report, then fail
        t.check(False, f"unexpected error: {e}")
    finally:
        if started:
            cluster("stop", work, check=False)
        shutil.rmtree(work, ignore_errors=True)
    t.finish()


if __name__ == "__main__":
    main()
