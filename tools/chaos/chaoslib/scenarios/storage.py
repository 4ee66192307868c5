"""A decider's data folder fills up (a tmpfs of its own)."""
import os

from .. import util
from ..cluster import CFG
from ..dns import steady
from ..scenario import scenario
from ..steps import acked_lost, first_answer_after_restart, history_has, marker

# Each RocksDB (state/ and raft/) preallocates its log: a tmpfs below ~32 MB
# cannot even start a decider. The stores keep 8 MB in reserve.
TMPFS_MB = 96
# The consensus server restarts from its log with backoff 1 s doubling to
# 30 s: after a long full spell the next try can be 30 s away.
CONSENSUS_BACKOFF_MAX_S = 30.0


@scenario("disk-full",
          fault="decider2's data folder is a %d MB tmpfs, filled to the last byte: a push through decider2 alone, "
                "a push through decider1, held full; the space freed; filled again, kill -9 of decider2 and a "
                "restart while full; freed" % TMPFS_MB,
          prop="DNS keeps answering on the full decider (no timeout, only configs that were committed); the push "
               "through the full decider fails cleanly (not acknowledged, rc 1) or is acknowledged and durable; "
               "the push through decider1 is acknowledged and served by decider1/3; no acknowledged push is lost; "
               "once space is free decider2 recovers by itself, without a restart (consensus back within its 30 s "
               "backoff ceiling, the newest config served, a push through decider2 alone acknowledged); restarted "
               "while full it answers the newest config (or exits with an error); after freeing a kill -9 keeps "
               "the newest config",
          order=100)
def disk_full(ctx):
    c = ctx.cluster(tmpfs_mb={"decider2": TMPFS_MB})
    b = c.bounds
    q = ctx.query_loop(c, name=CFG, rate=5)
    t = q.mark("baseline")
    q.expect(t, marker(1))
    ctx.require(q.wait_converged(t, marker(1), 10) is not None, "every responder answers the bootstrap marker")
    tm = c.tmpfs["decider2"]
    d2 = c.procs["decider2"]
    pushes = []
    served = {marker(1)}   # markers of committed configs: what a responder may answer
    st = c.status("decider2")
    ctx.note("decider2 is the Raft %s" % (st.role if st else "?"))
    # 1. Full: does DNS keep answering, does the process survive?
    t_full = q.mark("decider2's disk full")
    tm.fill()
    q.expect(t_full, served, ["decider2"])
    util.wait_for(lambda: not d2.alive(), 4, 0.2)  # 4 s of measurement writes against the full disk
    ctx.require(d2.alive(), "decider2 survives its disk filling up (exit status %s: %s)"
                % (d2.returncode(), d2.tail(300).strip().splitlines()[-1:]))
    ev = [line for kind, line in c.log_events("decider2", "decider2's disk full") if kind == "persist-failed"]
    ctx.note("decider2 logged while full: %s" % (ev[0].split(": ", 1)[-1][:160] if ev else "nothing"))
    # 2. A push through the full decider alone.
    # Every responder may serve a committed config; a push that was not
    # acknowledged may still be committed (gtmeshctl says so): its marker
    # is allowed too, and the end checks that every marker answered belongs
    # to a committed config.
    served.add(marker(2))
    q.expect(q.mark("push through full decider2"), served)
    r = c.push(c.config_text(marker=2), decider="decider2", label="to-full", all_deciders=False, retry_for_s=10)
    pushes.append(r)
    ctx.note("push through full decider2 alone: %s" % (("acknowledged as v%d by %s" % (r.version, r.by)) if r.acked
                                                       else "%s: %s" % (r.outcome, r.why())))
    # When decider2 leads, it may have sent the entry to the others before
    # its own write failed: then the outcome is unknown (rc 3, "check
    # gtmeshctl configs"), and the end checks it is on every decider or none.
    unknown = r.outcome == "no-ack" and r.rc == 3
    ctx.check(r.acked or r.clean_failure or unknown, "the push through the full decider is acknowledged, fails "
              "cleanly, or is reported as of unknown outcome (%s, rc %d)" % (r.outcome, r.rc))
    if r.acked:
        ok, _, _ = util.wait_for(lambda: all(history_has(c, d, r.version, r.sha) for d in ("decider1", "decider3")),
                                 b.applied_everywhere, 0.2)
        ctx.check(ok, "acknowledged while decider2's disk is full: decider1 and decider3 hold v%d (within %.1f s)"
                  % (r.version, b.applied_everywhere))
    # 3. A push through a healthy decider.
    served.add(marker(3))
    q.expect(q.mark("push through decider1"), served)
    r = c.push(c.config_text(marker=3), decider="decider1", label="via-d1")
    pushes.append(r)
    ctx.check(r.acked, "a push through decider1 is acknowledged (%s)" % r)
    if r.acked:
        ctx.phase(q, "push via decider1 served by decider1/3", None, marker(3), 5.0, before="any",
                  responders=["decider1", "decider3"])
    st = c.status("decider2")
    ctx.note("decider2 while full: %s" % ("config version %s, %s" % (st.version, st.consensus_line()) if st
                                          else "no status"))
    w = q.window("decider2", t_full, None, served)
    ctx.check(steady(w), "DNS on the full decider2 kept answering committed configs "
              "(%s)" % q.summary("decider2", t_full))
    # Held full for a while (the consensus server's restart backoff grows).
    util.wait_for(lambda: not d2.alive(), 4 if ctx.short else 20, 0.5)
    ctx.check(d2.alive(), "decider2 is still running after the full spell (%s)" % d2.returncode())
    # 4. Space freed, no restart: it recovers by itself.
    t_free = q.mark("space freed")
    tm.free()
    newest = max((x.version for x in pushes if x.acked), default=1)
    newest_marker = marker(3) if pushes[-1].acked else (marker(2) if pushes[0].acked else marker(1))
    bound = CONSENSUS_BACKOFF_MAX_S + b.new_leader
    ok, secs, _ = util.wait_for(lambda: (lambda s: s and s.version is not None and s.version >= newest and
                                         not s.no_majority and s.leader)(c.status("decider2", attempts=1)),
                                2 * bound, 0.5)
    ctx.converged("space freed -> decider2 recovers by itself: a leader and v%d" % newest, secs if ok else None,
                  bound)
    ctx.phase(q, "space freed -> decider2 serves the newest config", None, newest_marker, 10.0, before="any",
              responders=["decider2"])
    served.add(marker(4))
    q.expect(q.mark("push through decider2 after freeing"), served)
    r = c.push(c.config_text(marker=4), decider="decider2", label="after-free", all_deciders=False)
    pushes.append(r)
    ctx.check(r.acked, "after freeing, a push through decider2 alone is acknowledged (%s)" % r)
    if r.acked:
        newest_marker = marker(4)
        ctx.phase(q, "push after freeing served everywhere", None, marker(4), 5.0, before="any")
    # 5. Full again: kill -9, and a restart while full.
    tm.fill()
    t_kill = q.mark("decider2 killed while full")
    d2.kill9()
    q.exclude("decider2", t_kill)
    up = c.restart_decider("decider2", seconds=15, raise_on_failure=False)
    if up:
        first, _, _ = util.wait_for(lambda: c.query("decider2", CFG).answered, 3, 0.1)
        first = c.query("decider2", CFG)
        ctx.note("decider2 restarted while full: it runs and answers %s" % first)
        ctx.check(first == newest_marker, "restarted while full, decider2 answers the newest config (%s)" % first)
    else:
        rc = d2.returncode()
        why = (d2.tail(400).strip().splitlines() or ["?"])[-1].strip()[:200]
        ctx.note("decider2 restarted while full: exited %s: %s" % (rc, why))
        ctx.check(rc is not None and rc > 0, "restarted while full, decider2 runs or exits with an error of its own "
                  "(not a signal or abort: %s)" % rc)
        d2.stop()
    tm.free()
    if not d2.alive():
        ctx.check(c.restart_decider("decider2", raise_on_failure=False), "decider2 starts once space is free")
    q.exclude("decider2", t_kill, q.mark("decider2 running, space free again"))
    ok, secs, _ = util.wait_for(lambda: c.ready(), 2 * bound, 0.5)
    ctx.converged("space freed again -> every decider connected, a leader", secs if ok else None, bound)
    # 6. Durable on decider2 now: kill -9 and restart.
    t_k2 = q.mark("decider2 killed after the space was freed")
    d2.kill9()
    first, secs = first_answer_after_restart(c, "decider2", name=CFG)
    q.exclude("decider2", t_k2, q.mark("decider2 restarted"))
    ctx.check(first == newest_marker, "after freeing, a kill -9 and restart keeps the newest config at once "
              "(first answer %s after %.2f s, expected %s)" % (first, secs, newest_marker))
    util.wait_for(lambda: c.ready(), 15, 0.3)
    # Only committed configs were ever answered.
    committed = {h.sha for h in (c.config_history("decider1") or [])}
    by_marker = {marker(1): "bootstrap"}
    by_marker.update({marker(n): x.sha for n, x in zip((2, 3, 4), pushes)})
    seen = {a for _, _, a in q.snapshot() if a.answered and a.rcode == "NOERROR"}
    strays = [str(a) for a in seen if a not in by_marker or (by_marker[a] != "bootstrap" and
                                                             by_marker[a] not in committed)]
    ctx.check(not strays, "every marker answered belongs to a committed config (%s)" % (strays or "yes"))
    hists = {d: {h.sha for h in (c.config_history(d) or [])} for d in c.deciders}
    for x in pushes:
        if not x.acked and x.sha:
            held = sorted(d for d, shas in hists.items() if x.sha in shas)
            ctx.check(held in ([], sorted(c.deciders)), "the unacknowledged push %s is on every decider or on none "
                      "(%s)" % (os.path.basename(x.path), held or "none"))
    lost = acked_lost(c, pushes, b.applied_everywhere)
    ctx.configs(sum(1 for x in pushes if x.acked), lost)
    ctx.check(lost == 0, "every acknowledged push is at its version on every decider (%d lost)" % lost)
