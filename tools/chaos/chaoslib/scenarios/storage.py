"""A decider's data folder fills up (a small tmpfs)."""
import re
from .. import util
from ..cluster import CFG, marker_address
from ..dns import A
from ..scenario import scenario
from .processes import first_answer_after_restart


def marker(n):
    return A(marker_address(n))


@scenario("disk-full",
          fault="decider2's data folder is a 16 MB tmpfs, filled to the last byte; a push to decider2, a push "
                "via decider1, kill -9 of decider2 while full; then the space is freed",
          prop="the push to the full decider is refused or fails cleanly (never acknowledged without being "
               "durable); the push via decider1 is served everywhere and nothing acknowledged is lost; freeing "
               "the space recovers decider2 (a restart keeps the newest version)",
          order=100)
def disk_full(ctx):
    c = ctx.cluster(tmpfs_mb={"decider2": 16})
    q = ctx.query_loop(c, name=CFG, rate=5)
    t = q.mark("baseline")
    q.expect(t, marker(1))
    ctx.require(q.wait_converged(t, marker(1), 10) is not None, "every responder answers the bootstrap marker")
    tm = c.tmpfs["decider2"]
    d2 = c.procs["decider2"]
    # 0. The push path on its own: with the agents paused nothing else is
    #    written for a few seconds (until their links time out), so the
    #    push is the first write that meets the full disk.
    agents = [p for n, p in c.procs.items() if n.startswith("agent-")]
    for a in agents:
        a.pause()
    tm.fill()
    r1 = c.push(c.config_text(marker=2), decider="decider2", label="first-write")
    for a in agents:
        a.resume()
    ctx.note("push to decider2 as the first write on its full disk: %s%s" % (
        ("acknowledged as v%d" % r1.version) if r1.acked else "not acknowledged",
        (" (" + (r1.err.strip() or r1.out.strip()).splitlines()[-1][:160] + ")") if (r1.err.strip() or not r1.acked)
        and (r1.err.strip() or r1.out.strip()) else ""))
    restored_line = None
    if r1.acked:
        # Acknowledged: it must be durable on decider2 itself.
        d2.kill9()
        tm.free()
        c.restart_decider("decider2", raise_on_failure=False)
        m = re.findall(r"config version (\d+) \(([^)]*)\), \d+ measurements restored", d2.log_text())
        restored_line = m[-1] if m else None
        ctx.check(restored_line is not None and int(restored_line[0]) >= r1.version,
                  "the push decider2 acknowledged on a full disk survives its kill -9 (v%d; restored %s)"
                  % (r1.version, "v%s" % restored_line[0] if restored_line else "nothing"))
        tm.fill()
    t_full = q.mark("decider2's disk full")
    # It keeps persisting measurements every 100 ms: does it survive that?
    died, _, _ = util.wait_for(lambda: not d2.alive(), 3, 0.1)
    if died:
        q.exclude("decider2", t_full)
        crash = [l for l in d2.tail(1500).splitlines() if "Assertion" in l or "failed" in l or "error" in l.lower()]
        ctx.check(False, "decider2 survives its disk filling up (it exited with %s: %s)"
                  % (d2.returncode(), (crash or ["?"])[-1].strip()[:200]))
    else:
        ctx.check(True, "decider2 survives its disk filling up")
    acked = 1 if r1.acked else 0
    current = 2 if r1.acked else 1
    # 1. A push to the full decider: refused, or acknowledged and durable.
    r2 = c.push(c.config_text(marker=4), decider="decider2", label="to-full")
    ctx.note("push to full decider2: %s" % (("acknowledged as v%d" % r2.version) if r2.acked else
                                            "not acknowledged: " + (r2.err.strip().splitlines() or ["rc %d" % r2.rc])[-1]
                                            .strip()[:120]))
    if r2.acked:
        acked += 1
        current = 4
        d2.kill9()
        up = c.restart_decider("decider2", seconds=15, raise_on_failure=False)
        v = c.config_version("decider2") if up else None
        ctx.check(not up or (v is not None and v[0] >= r2.version),
                  "an acknowledged push to the full decider survives its kill -9 (v%d, found %s)" % (r2.version, v))
    else:
        ctx.check(r2.rc != 0, "the push that was not acknowledged reports an error (rc %d)" % r2.rc)
    # 2. A push via a healthy decider: acknowledged and served by every
    #    responder that runs.
    r3 = c.push(c.config_text(marker=5), decider="decider1", label="via-d1")
    ctx.check(r3.acked, "a push via decider1 is acknowledged (%s)" % r3)
    if r3.acked:
        acked += 1
        current = 5
    running = [d for d in c.deciders if c.procs[d].alive()]
    ctx.phase(q, "push via decider1 served", None, marker(current), 5.0, before="any", responders=running)
    # 3. kill -9 decider2 while the disk is still full, restart it.
    t_kill = q.mark("decider2 killed while full")
    q.exclude("decider2", t_kill)
    d2.kill9()
    if c.restart_decider("decider2", seconds=10, raise_on_failure=False):
        ctx.note("decider2 restarted while full first answers %s" % c.query("decider2", CFG))
    else:
        ctx.note("decider2 cannot start while its disk is full: %s" %
                 (d2.tail(400).strip().splitlines() or ["?"])[-1].strip()[:200])
        d2.stop()
    # 4. Free the space: decider2 (re)starts and serves the newest config.
    tm.free()
    if not d2.alive():
        ctx.check(c.restart_decider("decider2", raise_on_failure=False), "decider2 starts once space is free")
    t_free = q.mark("space freed")
    q.exclude("decider2", t_kill, t_free)
    ctx.phase(q, "space freed -> decider2 serves the newest config", None, marker(current), 10.0, before="any",
              responders=["decider2"])
    # Durable now? Another kill -9 once it reports the version.
    util.wait_for(lambda: (c.config_version("decider2") or (0,))[0] >= (r3.version or 0), 10, 0.3)
    t_k2 = q.mark("decider2 killed after the space was freed")
    d2.kill9()
    first, secs = first_answer_after_restart(c, "decider2", name=CFG)
    q.exclude("decider2", t_k2, q.mark("decider2 restarted"))
    ctx.check(first == marker(current), "after freeing, a kill -9 and restart keeps the newest config at once "
              "(first answer %s after %.2f s, expected %s)" % (first, secs, marker(current)))
    versions = {d: c.config_version(d) for d in c.deciders}
    newest = max(v[0] for v in versions.values() if v)
    lost = 0 if all(v and v[0] == newest for v in versions.values()) and (not r3.acked or newest >= r3.version) else 1
    ctx.configs(acked, lost)
    ctx.check(lost == 0, "every decider holds the newest acknowledged version (%s)" %
              {d: v[0] if v else None for d, v in versions.items()})
