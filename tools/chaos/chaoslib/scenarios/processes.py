"""Processes dying (kill -9) and hanging (SIGSTOP): agents and deciders."""
import time

from .. import util
from ..cluster import FAIL_SAFE, www
from ..dns import TIMEOUT, steady
from ..scenario import scenario
from ..steps import baseline, first_answer_after_restart, hold


@scenario("kill-agent",
          fault="kill -9 of fra's agent (its DC has no other); restarted later",
          prop="fra's answers fail over to iad within the unreachable bound (on decider1, the agent's own "
               "decider, within idle timeout + dc-down-after; on the others when fra's data goes stale); after the "
               "restart fra returns within the reconnect bound",
          order=70)
def kill_agent(ctx):
    c = ctx.cluster()
    b = c.bounds
    q = ctx.query_loop(c)
    baseline(ctx, c, q)
    fra, iad = www("fra"), www("iad")
    agent = c.procs["agent-fra"]
    t, _ = ctx.phase(q, "agent-fra killed -> iad", agent.kill9, iad, b.dc_unreachable, before=fra)
    ctx.also_within(q, t, "agent-fra killed -> iad on decider1 (its agent's decider: dc-down-after)", iad,
                    b.dc_unreachable_own, ["decider1"])
    ctx.phase(q, "agent-fra restarted -> fra", agent.start, fra, b.reconnect, before=iad)


@scenario("stop-agent",
          fault="SIGSTOP of fra's agent (hung, its TCP connections open); SIGCONT later",
          prop="heartbeats notice the hang: fra fails over to iad within the unreachable bound (decider1, the "
               "agent's own decider, within idle timeout + dc-down-after; the others by staleness); after SIGCONT "
               "fra returns within the reconnect bound",
          order=75)
def stop_agent(ctx):
    c = ctx.cluster()
    b = c.bounds
    q = ctx.query_loop(c)
    baseline(ctx, c, q)
    fra, iad = www("fra"), www("iad")
    agent = c.procs["agent-fra"]
    t, _ = ctx.phase(q, "agent-fra stopped -> iad", agent.pause, iad, b.dc_unreachable, before=fra)
    ctx.also_within(q, t, "agent-fra stopped -> iad on decider1 (its agent's decider: idle timeout + "
                    "dc-down-after)", iad, b.dc_unreachable_own, ["decider1"])
    ctx.phase(q, "agent-fra continued -> fra", agent.resume, fra, b.reconnect, before=iad)


@scenario("kill-decider",
          fault="kill -9 of decider1 (fra's agent's decider); restarted; killed again, and while it is dead fra "
                "goes down and a config is pushed with decider1 named first to gtmeshctl; restarted",
          prop="decider2/3 keep answering correctly throughout (fra, then iad within the failover bound); the "
               "push is acknowledged by the remaining majority; restarted, decider1 answers at once from its "
               "last-known-good state (RocksDB), converges to iad within the reconnect bound and holds the push "
               "at its acknowledged version",
          ctest=True, order=80)
def kill_decider(ctx):
    c = ctx.cluster()
    b = c.bounds
    q = ctx.query_loop(c)
    baseline(ctx, c, q)
    fra, iad = www("fra"), www("iad")
    others = [d for d in c.deciders if d != "decider1"]
    # 1. Killed and restarted while nothing changes: the first answer after
    #    the restart is the last-known-good one.
    t = q.mark("decider1 killed")
    c.procs["decider1"].kill9()
    q.exclude("decider1", t)
    q.expect(t, fra, others)
    ok = q.wait_converged(t, fra, 3, others) is not None
    ctx.check(ok, "decider2/3 keep answering fra while decider1 is dead")
    first, secs = first_answer_after_restart(c, "decider1")
    q.exclude("decider1", t, time.monotonic())
    ctx.check(first == fra, "restarted decider1 answers from RocksDB at once: %s (%.2f s after the start)"
              % (first, secs))
    # 2. Killed; fra goes down while it is dead; restarted.
    t = q.mark("decider1 killed again")
    c.procs["decider1"].kill9()
    q.exclude("decider1", t)
    ctx.phase(q, "fra down while decider1 is dead -> iad on decider2/3", lambda: c.dc_down("fra"), iad, b.failover,
              before=fra, responders=others)
    t0 = time.monotonic()
    r = c.push(c.config_text(marker=21), decider="decider1", label="while-dead")
    ctx.check(r.acked, "a push with the dead decider1 named first is acknowledged by decider2/3 (%s, %.1f s)"
              % (r, time.monotonic() - t0))
    first, secs = first_answer_after_restart(c, "decider1")
    t_up = q.mark("decider1 restarted")
    q.exclude("decider1", t, t_up)
    ctx.note("decider1's first answer after the restart (fra went down while it was dead): %s after %.2f s"
             % (first, secs))
    ctx.check(first != TIMEOUT and first.rcode == "NOERROR", "restarted decider1 answers at once: %s" % first)
    ctx.phase(q, "restarted decider1 -> iad", None, iad, b.reconnect, before=fra, responders=["decider1"])
    if r.acked:
        ok, secs, hist = util.wait_for(lambda: [h for h in (c.config_history("decider1") or [])
                                                if h.version == r.version], b.reconnect, 0.3)
        ctx.check(ok and hist[0].sha == r.sha, "restarted decider1 holds the push acknowledged while it was dead, at "
                  "v%d (%s)" % (r.version, "after %.1f s" % secs if ok else "not there"))
        ctx.configs(1, 0 if ok and hist[0].sha == r.sha else 1)


@scenario("stop-decider",
          fault="SIGSTOP of decider2 (iad's agent's decider) for several seconds while fra goes down; SIGCONT",
          prop="decider1/3 follow the failover within the failover bound while decider2 hangs; after SIGCONT "
               "decider2 converges to iad within the reconnect bound (stale answers after the resume are counted)",
          order=85)
def stop_decider(ctx):
    c = ctx.cluster()
    b = c.bounds
    q = ctx.query_loop(c)
    baseline(ctx, c, q)
    fra, iad = www("fra"), www("iad")
    others = [d for d in c.deciders if d != "decider2"]
    t = q.mark("decider2 stopped")
    c.procs["decider2"].pause()
    q.exclude("decider2", t)
    ctx.phase(q, "fra down while decider2 hangs -> iad on decider1/3", lambda: c.dc_down("fra"), iad, b.failover,
              before=fra, responders=others)
    t_cont, secs = ctx.phase(q, "decider2 continued -> iad", c.procs["decider2"].resume, iad, b.reconnect,
                             before=fra, responders=["decider2"])
    q.exclude("decider2", t, t_cont)
    ctx.note("decider2 after SIGCONT: " + q.summary("decider2", t_cont))


@scenario("all-links-gone",
          fault="every decider cut from every other decider (nftables); once each reports ISOLATED every agent "
                "is killed (-9): no peer and no agent left anywhere, held longer than staleness and "
                "dc-down-after; decider1 killed (-9) and restarted while alone; then the agents "
                "restarted (each reaches its own decider) and the partitions healed",
          prop="responders keep answering from last-known-good (fra) when every peer and agent is gone: no "
               "fail_safe (%s), no other DC, no silence (at most the odd lost UDP query), on every responder for the "
               "whole time; after the heal a leader is elected within the reconnect bound and every responder "
               "answers fra throughout" % FAIL_SAFE,
          order=88)
def all_links_gone(ctx):
    c = ctx.cluster()
    b = c.bounds
    q = ctx.query_loop(c)
    baseline(ctx, c, q)
    fra = www("fra")
    t = q.mark("deciders partitioned from each other")
    q.expect(t, fra)
    cuts = []
    for i, a in enumerate(c.deciders):
        for d in c.deciders[i + 1:]:
            cuts.append(ctx.firewall.partition([a], [d]))

    def all_isolated():
        sts = {d: c.status(d, attempts=1) for d in c.deciders}
        return sts if all(st and st.isolated for st in sts.values()) else None

    ok, secs, sts = util.wait_for(all_isolated, 15, 0.3)
    ctx.check(ok, "every decider reports ISOLATED (%s)" % ("after %.1f s" % secs if ok else "not within 15 s"))
    t_agents = q.mark("every agent killed")
    for dc in c.spec.dcs:
        c.procs["agent-" + dc].kill9()
    duration = max(b.dc_unreachable, b.service_stale, b.host_stale) + (6 if ctx.short else 30)
    hold(duration, t_agents)
    for d in c.deciders:
        w = q.window(d, t, None, fra)
        ctx.check(steady(w), "%s answered last-known-good fra for %.0f s with no peer "
                  "and no agent (%s)" % (d, time.monotonic() - t, q.summary(d, t)))
    st = c.status("decider1")
    if st:
        ctx.note("decider1 alone: %s; %s" % (st.isolated, "; ".join("dc %s: %s" % kv for kv in st.dcs.items())))
    # A restart while alone: it counts as isolated from its first moment
    # (docs/mesh.md), so its restored values stay as fresh as they were
    # stored and it answers what it answered before: fra, from the first
    # answer on (it answered fail_safe for 0.05 s before that rule).
    t_kill = q.mark("decider1 killed and restarted while alone")
    c.procs["decider1"].kill9()
    q.exclude("decider1", t_kill)
    first, secs = first_answer_after_restart(c, "decider1")
    t_up = q.mark("decider1 up again")
    q.exclude("decider1", t_kill, t_up)
    q.expect(t_up, fra, ["decider1"])
    hold(3, t_up)
    ctx.note("decider1 restarted while alone: first answer %s after %.2f s, then %s"
             % (first, secs, q.summary("decider1", t_up)))
    ctx.check(first == fra, "decider1 restarted while alone answers last-known-good fra at once (%s)" % first)
    # Back: the agents first (each reaches its own decider: fresh values
    # apply while isolated), then the deciders.
    t_back = q.mark("agents restarted")
    for dc in c.spec.dcs:
        c.procs["agent-" + dc].start()
    own = dict(zip(c.spec.dcs, c.deciders))

    def agents_back():
        for dc, d in own.items():
            st = c.status(d, attempts=1)
            if not st or not st.dcs.get(dc, "").endswith("1 agent(s) connected"):
                return False
        return True

    ok, secs, _ = util.wait_for(agents_back, b.reconnect, 0.3)
    ctx.check(ok, "every agent reached its own decider (%s)" % ("%.1f s" % secs if ok else "not within %.0f s"
                                                                 % b.reconnect))
    # decider1 (restarted, its values stale) answers fra again once fra's
    # agent has fresh verdicts for it; the others never stopped.
    secs = q.wait_converged(t_back, fra, b.reconnect, ["decider1"])
    ctx.converged("agents back -> decider1 fra", secs, b.reconnect)
    t_heal = q.mark("partitions healed")
    q.expect(t_heal, fra)
    for f in cuts:
        f.heal()
    ok, secs, _ = util.wait_for(lambda: c.ready(), b.reconnect + b.new_leader, 0.3)
    ctx.converged("healed -> a leader, every decider connected", secs if ok else None, b.reconnect + b.new_leader)
    hold(4, time.monotonic())
    for d in c.deciders:
        w = q.window(d, t_heal, None, fra)
        ctx.check(steady(w), "%s answers fra through the heal (%s)"
                  % (d, q.summary(d, t_heal)))
    # Restarted while cut off, decider1 never had a majority: at the heal it
    # takes the pauses of the peer it caught up from, which was isolated as
    # long (it answered fail_safe once at the heal when it aged the values by
    # the real clock instead: docs/reliability.md, issue 41 item 11).
    back = [ln for ln in c.procs["decider1"].log_text().splitlines()
            if "a majority of deciders is reachable again" in ln]
    ctx.check(any("it ages values as its peers do (paused" in ln for ln in back),
              "decider1, restarted while cut off, ages values as its peers do after the heal (%s)"
              % (back[-1].strip() if back else "no 'reachable again' line in its log"))
