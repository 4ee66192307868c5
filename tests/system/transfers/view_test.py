#!/usr/bin/python3
"""System test: the serial follows a zone's `view: current` (docs/transfers.md,
"The serial"). tools/cluster.sh's three deciders, and a Knot secondary of
decider 1 that every decider NOTIFYs.

1. A push gives demo.example `transfer: {view: current}`: the leader commits
   the zone's view, and every decider transfers the same records under the
   same serial, above the config version (2 + the view's generation); Knot
   pulls it.
2. `gtmeshctl drain fra` changes no config but www's and api's answers: every
   decider moves to one new serial with the same records (iad's addresses),
   Knot holds it within 2 s of decider 1 serving it, by IXFR, and answers
   www with iad's address; IXFR from the old serial at decider 3 is the
   change alone.
3. Decider 2, killed (-9) and restarted, answers the new serial (or a newer
   one) from its first answer, never the config version alone (the views
   are in its store and in the log; decider_core_test checks the store
   alone).
4. Undraining fra moves the serial again, back to fra's addresses.
"""

import os
import re
import shutil
import signal
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "dns_lib"))
sys.path.insert(0, HERE)
from cluster_helpers import DEMO_NS_LINE, cluster, ctl, decider_addresses, wait_for  # noqa: E402
from gtmesh_dns import Checks, dig, kdig  # noqa: E402
from transfers_test import start_knot, stop, xfr_records as records  # noqa: E402

ZONE = "demo.example"
FRA = {"www": "192.0.2.10", "api": "192.0.2.30", "near": "192.0.2.250"}
IAD = {"www": "198.51.100.10", "api": "198.51.100.30", "near": "192.0.2.250"}


def serial(host, port):
    """The SOA serial `host:port` answers for the zone over UDP, or None."""
    out = dig(host, port, ZONE, "SOA", "+short", "+time=1", "+tries=1").split()
    return int(out[2]) if len(out) >= 3 and out[2].isdigit() else None


def dynamic(rows):
    """{name: address} of the zone's dynamic names in a transfer."""
    return {r[0].split(".")[0]: r[3] for r in rows if r[2] == "A" and r[0].split(".")[0] in FRA}


def main():
    t = Checks("dns_transfers_views")
    work = tempfile.mkdtemp(prefix="gtmesh-xfr-views-")
    started = False
    knot = None
    try:
        cluster("start", work)
        started = True
        mesh, dns = decider_addresses(work)
        knot, knot_port, knot_log = start_knot(work, dns[1][1], zone=ZONE)

        text = open(os.path.join(work, "cluster.yaml")).read()
        anchor = DEMO_NS_LINE
        t.check(anchor in text, "the cluster config has demo.example's ns line")
        pushed = os.path.join(work, "v2.yaml")
        open(pushed, "w").write(text.replace(
            anchor, anchor + '    transfer: {view: current, allow: [127.0.0.1], notify: ["127.0.0.1:%d"]}\n' % knot_port,
            1))
        r = ctl(mesh[1], "push", pushed)
        t.check(r.returncode == 0, "push of version 2 with transfer: {view: current}", (r.stdout + r.stderr).strip())

        def axfr(n):
            host, port = dns[n]
            return records(kdig(host, port, "AXFR", ZONE))

        def one_view(want):
            """Every decider's AXFR, when all have one serial above 2 and the
            same records, whose dynamic names are `want`; else None."""
            got = {n: axfr(n) for n in dns}
            serials = {g[0][3].split()[2] if g and g[0][2] == "SOA" else None for g in got.values()}
            if len(serials) != 1 or None in serials or int(next(iter(serials))) <= 2:
                return None
            if any(sorted(g) != sorted(got[1]) for g in got.values()) or dynamic(got[1]) != want:
                return None
            return int(next(iter(serials))), got[1]

        first = wait_for(lambda: one_view(FRA), 30, 0.2)
        t.check(first is not None, "every decider transfers the zone's view (www, api in fra) under one serial above "
                "the config version 2", str({n: axfr(n) for n in dns}) if first is None else "")
        if not first:
            raise RuntimeError("no committed view to go on from")
        s1, rows1 = first
        t.check(rows1[0] == rows1[-1] and ("ns1.demo.example.", "30", "A", "127.0.0.1") in rows1,
                "SOA first and last, the static records in it")
        knot_at_s1 = wait_for(lambda: serial("127.0.0.1", knot_port) == s1, 30, 0.1)
        t.check(knot_at_s1, f"Knot pulls serial {s1}", open(knot_log).read()[-1500:])

        # 2. A drain: no config change, another view.
        offset = len(open(knot_log).read())
        r = ctl(mesh[2], "drain", "fra")
        t.check(r.returncode == 0, "fra drained", (r.stdout + r.stderr).strip())
        moved = wait_for(lambda: serial(*dns[1]) not in (None, s1), 15, 0.02)
        decider1_at = time.monotonic()
        t.check(moved, "decider 1's serial moves after the drain")
        second = wait_for(lambda: one_view(IAD), 15, 0.2)
        t.check(second is not None and second[0] > s1,
                f"every decider transfers the new view (www, api in iad) under one new serial above {s1}",
                str({n: axfr(n) for n in dns}) if second is None else "")
        if not second:
            raise RuntimeError("no second view to go on from")
        s2 = second[0]
        t.check(wait_for(lambda: serial("127.0.0.1", knot_port) == s2, 2, 0.02),
                f"Knot holds serial {s2} within 2 s of decider 1 serving it (NOTIFY)",
                "after %.2f s: %s" % (time.monotonic() - decider1_at, serial("127.0.0.1", knot_port)))
        tail = open(knot_log).read()[offset:]
        t.check(re.search(r"IXFR, incoming.*(finished|serial %d -> %d)" % (s1, s2), tail) is not None
                and "AXFR, incoming" not in tail, "Knot took it by IXFR, not AXFR", tail[-1500:])
        got = dig("127.0.0.1", knot_port, "www." + ZONE, "A", "+short").split()
        t.equal(got, [IAD["www"]], "Knot answers www with iad's address, as the committed view")
        host, port = dns[3]
        ixfr = records(kdig(host, port, "IXFR=%d" % s1, ZONE))
        changed = [r for r in ixfr if r[2] == "A"]
        t.check(len(ixfr) == 8 and ixfr[1][2] == "SOA" and ixfr[1][3].split()[2] == str(s1) and
                dynamic(ixfr[2:4]) == {"www": FRA["www"], "api": FRA["api"]} and ixfr[4] == ixfr[0] and
                dynamic(ixfr[5:7]) == {"www": IAD["www"], "api": IAD["api"]} and ixfr[7] == ixfr[0] and
                len(changed) == 4,
                f"IXFR from {s1} at decider 3: SOA {s2}, SOA {s1}, fra's www and api, SOA {s2}, iad's, SOA {s2}: "
                "nothing else", str(ixfr))

        # 3. kill -9 and restart decider 2: the new serial from its first answer.
        pid = int(open(os.path.join(work, "decider2.pid")).read())
        os.kill(pid, signal.SIGKILL)
        wait_for(lambda: not os.path.exists("/proc/%d" % pid) or
                 open("/proc/%d/stat" % pid).read().split()[2] == "Z", 10, 0.02)
        cluster("restart-decider", work, "2")
        first_answer = wait_for(lambda: serial(*dns[2]), 30, 0.02)
        # s2, or above when a new leader committed its own view meanwhile;
        # never below, as the log's replay from its start must not bring.
        seen = [first_answer]
        until = time.monotonic() + 3
        while time.monotonic() < until:
            seen.append(serial(*dns[2]))
            time.sleep(0.05)
        t.check(None not in seen and min(seen) >= s2 and seen == sorted(seen),
                f"decider 2, killed (-9) and restarted, answers serial {s2} or above from its first answer on, "
                "never going back", f"answered {sorted(set(x for x in seen if x is not None))}, first {first_answer}")

        # 4. Undrain: the view goes back, under a newer serial.
        r = ctl(mesh[3], "undrain", "fra")
        t.check(r.returncode == 0, "fra undrained", (r.stdout + r.stderr).strip())
        third = wait_for(lambda: one_view(FRA), 20, 0.2)
        t.check(third is not None and third[0] > s2, f"back to fra's addresses under a serial above {s2}", str(third))
        if third:
            t.check(wait_for(lambda: serial("127.0.0.1", knot_port) == third[0], 5, 0.05),
                    f"Knot follows to serial {third[0]}")
    except Exception as e:  # report, then fail
        t.check(False, f"unexpected error: {e}")
    finally:
        stop(knot)
        if started:
            if t.failed:
                for n in (1, 2, 3):
                    path = os.path.join(work, "decider%d.log" % n)
                    if os.path.exists(path):
                        print(f"--- {path}\n{open(path).read()[-2000:]}")
            cluster("stop", work, check=False)
        shutil.rmtree(work, ignore_errors=True)
    t.finish()


if __name__ == "__main__":
    main()
