"""Processes dying (kill -9) and hanging (SIGSTOP): agents and deciders."""
import time

from ..cluster import WWW, www
from ..dns import TIMEOUT
from ..scenario import scenario
from .health import baseline


@scenario("kill-agent",
          fault="kill -9 of fra's agent (its DC has no other); restarted later",
          prop="fra's answers fail over to iad within the unreachable bound; after the restart fra returns "
               "within the reconnect bound",
          order=70)
def kill_agent(ctx):
    c = ctx.cluster()
    b = c.bounds
    q = ctx.query_loop(c)
    baseline(ctx, c, q)
    fra, iad = www("fra"), www("iad")
    agent = c.procs["agent-fra"]
    ctx.phase(q, "agent-fra killed -> iad", agent.kill9, iad, b.dc_unreachable, before=fra)
    ctx.phase(q, "agent-fra restarted -> fra", agent.start, fra, b.reconnect, before=iad)


@scenario("stop-agent",
          fault="SIGSTOP of fra's agent (hung, its TCP connections open); SIGCONT later",
          prop="heartbeats notice the hang: fra fails over to iad within the unreachable bound; after SIGCONT "
               "fra returns within the reconnect bound",
          order=75)
def stop_agent(ctx):
    c = ctx.cluster()
    b = c.bounds
    q = ctx.query_loop(c)
    baseline(ctx, c, q)
    fra, iad = www("fra"), www("iad")
    agent = c.procs["agent-fra"]
    ctx.phase(q, "agent-fra stopped -> iad", agent.pause, iad, b.dc_unreachable, before=fra)
    ctx.phase(q, "agent-fra continued -> fra", agent.resume, fra, b.reconnect, before=iad)


def first_answer_after_restart(c, d, seconds=10, name=WWW):
    """Restarts decider d (already dead) and queries its responder as soon as
    its port file is there: (first Answer, seconds from start to that answer)."""
    t0 = time.monotonic()
    c.start_decider(d)
    ans = TIMEOUT
    deadline = t0 + seconds
    while time.monotonic() < deadline:
        ans = c.query(d, name, timeout=0.3)
        if ans != TIMEOUT:
            break
    return ans, time.monotonic() - t0


@scenario("kill-decider",
          fault="kill -9 of decider1 (fra's agent's decider); fra goes down while it is dead; restarted",
          prop="decider2/3 keep answering correctly throughout (fra, then iad within the failover bound); "
               "restarted, decider1 answers at once from its last-known-good state (RocksDB) and converges "
               "to iad within the reconnect bound",
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
    first, secs = first_answer_after_restart(c, "decider1")
    t_up = q.mark("decider1 restarted")
    q.exclude("decider1", t, t_up)
    ctx.note("decider1's first answer after the restart (fra went down while it was dead): %s after %.2f s"
             % (first, secs))
    ctx.check(first != TIMEOUT and first.rcode == "NOERROR", "restarted decider1 answers at once: %s" % first)
    ctx.phase(q, "restarted decider1 -> iad", None, iad, b.reconnect, before=fra, responders=["decider1"])


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
