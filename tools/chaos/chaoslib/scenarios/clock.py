"""Clock skew of one node, with libfaketime (wall clock only)."""
import os
import time

from .. import util
from ..cluster import www
from ..scenario import scenario
from .health import baseline
from .network import hold


def cert_age(c, name):
    try:
        return time.time() - os.path.getmtime(os.path.join(c.tls_dir, name + ".pem"))
    except OSError:
        return None


def skew_round(ctx, c, q, proc_name, spec, steady_s):
    """Restart proc under FAKETIME=spec, check answers stay fra for
    steady_s, then that a failover of fra still happens within the bound."""
    b = c.bounds
    fra, iad = www("fra"), www("iad")
    p = c.procs[proc_name]
    before = {d: v["wrong"] for d, v in q.score()["per"].items()}
    t = q.mark("%s restarted with clock %s" % (proc_name, spec))
    if proc_name.startswith("decider"):
        p.faketime = spec
        c.restart_decider(proc_name)
    else:
        p.restart(faketime=spec)
    q.expect(t, fra)
    hold(steady_s, t)
    # What the skewed node itself reports (the skew took: ages move).
    st = c.status(proc_name if proc_name.startswith("decider") else "decider1") or ""
    dc_line = next((l.strip() for l in st.splitlines() if l.strip().startswith("dc fra")), "no status")
    ctx.note("clock %s on %s: %s status says %s" % (spec, proc_name, proc_name if proc_name.startswith("decider")
                                                   else "decider1", dc_line))
    per = q.score()["per"]
    summary = {d: q.summary(d, t) for d in c.deciders}
    wrong_now = {d: per[d]["wrong"] - before[d] for d in c.deciders}
    ctx.note("clock %s on %s, steady state: %s" % (spec, proc_name, "; ".join("%s %s" % kv for kv in summary.items())))
    _, secs = ctx.phase(q, "clock %s on %s: fra down -> iad" % (spec, proc_name), lambda: c.dc_down("fra"), iad,
                        b.failover, before=fra)
    _, secs2 = ctx.phase(q, "clock %s on %s: fra up -> fra" % (spec, proc_name), lambda: c.dc_up("fra"), fra,
                         b.recover, before=iad)
    # Back to the right clock, and to fra everywhere, before the next round.
    t_reset = q.mark("%s restarted with the right clock" % proc_name)
    q.expect(t_reset, None)
    if proc_name.startswith("decider"):
        p.faketime = None
        c.restart_decider(proc_name)
    else:
        p.restart(faketime=None)
    back = q.wait_converged(t_reset, fra, b.reconnect)
    q.expect(q.mark("reset done"), fra)
    ctx.check(back is not None, "with the right clock again every responder answers fra (%s)" % util.fmt_s(back))
    return wrong_now


def after_skews(ctx, c, q):
    """Every clock right again: does a failover still work (nothing dated in
    the future sticks)?"""
    b = c.bounds
    fra, iad = www("fra"), www("iad")
    ctx.phase(q, "clocks right again: fra down -> iad", lambda: c.dc_down("fra"), iad, b.failover, before=fra)
    ctx.phase(q, "clocks right again: fra up -> fra", lambda: c.dc_up("fra"), fra, b.recover, before=iad)


@scenario("skew-agent",
          fault="fra's agent restarted with its wall clock +5 s, -5 s, then +1 h (libfaketime)",
          prop="answers stay correct: fra while healthy, failover to iad within the failover bound and back",
          order=110)
def skew_agent(ctx):
    c = ctx.cluster()
    q = ctx.query_loop(c)
    baseline(ctx, c, q)
    age = cert_age(c, "agent-fra")
    ctx.note("certificates were %.0f s old when the skew began (a clock behind a certificate's notBefore fails "
             "the TLS handshake)" % (age or -1))
    steady = 5 if ctx.short else 20
    for spec in ("+5s", "-5s", "+1h"):
        wrong = skew_round(ctx, c, q, "agent-fra", spec, steady)
        ctx.check(sum(wrong.values()) == 0, "clock %s on agent-fra: every responder keeps answering fra "
                  "(wrong answers while healthy: %s)" % (spec, wrong))
    after_skews(ctx, c, q)


@scenario("skew-decider",
          fault="decider1 restarted with its wall clock +5 s, -5 s, then +1 h (libfaketime)",
          prop="answers stay correct on every responder, the skewed one included: fra while healthy, failover "
               "to iad within the failover bound and back",
          order=115)
def skew_decider(ctx):
    c = ctx.cluster()
    q = ctx.query_loop(c)
    baseline(ctx, c, q)
    steady = 5 if ctx.short else 20
    for spec in ("+5s", "-5s", "+1h"):
        wrong = skew_round(ctx, c, q, "decider1", spec, steady)
        ctx.check(sum(wrong.values()) == 0, "clock %s on decider1: every responder keeps answering fra "
                  "(wrong answers while healthy: %s)" % (spec, wrong))
    after_skews(ctx, c, q)
