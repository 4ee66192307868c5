"""Clock skew of one node, with libfaketime (wall clock only). Measurement
times are rebased to the receiver's clock at every hop, so a skewed agent or
decider must change nothing. The harness's certificates start 2 h in the
past (Cluster.CERT_BACKDATE), so a clock up to 2 h behind still finds them
valid: these scenarios test gtmesh, not TLS's notBefore."""
import time

from .. import util
from ..cluster import www
from ..dns import steady
from ..scenario import scenario
from ..steps import baseline, hold

SKEWS = ("+5s", "-5s", "+1h", "-1h")
# How far from a decider's clock a signed action may be taken there
# (core/consensus/action_proof.hpp, signature_freshness_ms).
SIGNATURE_FRESHNESS_S = 300


def _skew_seconds(spec):
    return float(spec[:-1]) * {"s": 1, "m": 60, "h": 3600}[spec[-1]]


def skew_round(ctx, c, q, proc_name, spec, steady_s):
    """Restart proc under FAKETIME=spec; every responder must keep answering
    fra for steady_s, then follow a failover of fra within the bound and
    come back; then the clock is set right again."""
    b = c.bounds
    fra, iad = www("fra"), www("iad")
    p = c.procs[proc_name]
    is_decider = proc_name.startswith("decider")
    t = q.mark("%s restarted with clock %s" % (proc_name, spec))
    if is_decider:
        q.exclude(proc_name, t)
        p.faketime = spec
        c.restart_decider(proc_name)
        q.exclude(proc_name, t, q.mark("%s up with clock %s" % (proc_name, spec)))
    else:
        p.restart(faketime=spec)
    t_up = time.monotonic()
    q.expect(t, fra)
    hold(steady_s, t_up)
    wrong = {d: q.window(d, t, None, fra) for d in c.deciders}
    st = c.status(proc_name if is_decider else "decider1")
    ctx.note("clock %s on %s: %s; answers %s" % (
        spec, proc_name, ("%s status: dc fra: %s" % (st.name, st.dcs.get("fra", "?"))) if st else "no status",
        "; ".join("%s %s" % (d, q.summary(d, t)) for d in c.deciders)))
    ctx.check(all(steady(w) for w in wrong.values()),
              "clock %s on %s: every responder keeps answering fra for %d s (wrong/unanswered: %s)"
              % (spec, proc_name, steady_s, {d: (w["wrong"], w["timeouts"]) for d, w in wrong.items()}))
    ctx.phase(q, "clock %s on %s: fra down -> iad" % (spec, proc_name), lambda: c.dc_down("fra"), iad, b.failover,
              before=fra)
    ctx.phase(q, "clock %s on %s: fra up -> fra" % (spec, proc_name), lambda: c.dc_up("fra"), fra, b.recover,
              before=iad)
    # Back to the right clock, and fra everywhere, before the next round.
    t_reset = q.mark("%s restarted with the right clock" % proc_name)
    if is_decider:
        q.exclude(proc_name, t_reset)
        p.faketime = None
        c.restart_decider(proc_name)
        q.exclude(proc_name, t_reset, q.mark("%s up with the right clock" % proc_name))
    else:
        p.restart(faketime=None)
    q.expect(t_reset, fra)
    back = q.wait_converged(t_reset, fra, b.reconnect)
    ctx.check(back is not None, "with the right clock again every responder answers fra (%s)" % util.fmt_s(back))


def after_skews(ctx, c, q):
    """Every clock right again: does a failover still work (nothing dated in
    the future sticks)?"""
    b = c.bounds
    fra, iad = www("fra"), www("iad")
    ctx.phase(q, "clocks right again: fra down -> iad", lambda: c.dc_down("fra"), iad, b.failover, before=fra)
    ctx.phase(q, "clocks right again: fra up -> fra", lambda: c.dc_up("fra"), fra, b.recover, before=iad)


def cert_margin(ctx, c):
    nb = c.cert_not_before("agent-fra")
    if nb is None:
        ctx.note("certificate start unknown")
        return
    margin = time.time() - nb
    ctx.note("certificates started %.0f s before the first skew (a clock further behind than that fails every TLS "
             "handshake)" % margin)
    worst = -min(_skew_seconds(s) for s in SKEWS)
    ctx.check(margin > worst, "every skew stays within the certificates' validity (%.0f s > %.0f s)"
              % (margin, worst))


@scenario("skew-agent",
          fault="fra's agent restarted with its wall clock %s (libfaketime; monotonic time untouched)"
                % ", ".join(SKEWS),
          prop="no wrong answer (and no more than the odd lost UDP query) on any responder while fra is healthy; "
               "failover to iad within the failover bound and back within the recovery bound, with each skew and "
               "after",
          order=110)
def skew_agent(ctx):
    c = ctx.cluster()
    q = ctx.query_loop(c)
    baseline(ctx, c, q)
    cert_margin(ctx, c)
    hold_s = 6 if ctx.short else 20
    for spec in SKEWS:
        skew_round(ctx, c, q, "agent-fra", spec, hold_s)
    after_skews(ctx, c, q)


@scenario("skew-decider",
          fault="decider1's wall clock %s (libfaketime; monotonic time untouched), each in a cluster of its own "
                "where decider1 runs skewed from the start; then, in the last one, decider1 restarted with its "
                "clock set right (a step of +1 h across a restart)" % ", ".join(SKEWS),
          prop="no wrong answer (and no more than the odd lost UDP query) on any responder, the skewed one "
               "included, while fra is healthy; failover to iad within the failover bound and back within the "
               "recovery bound; a push through the skewed decider is acknowledged within the 300 s a signed action may be "
               "taken within, and beyond that refused there, saying so, and acknowledged through another decider; "
               "after the clock step decider1 "
               "answers fra again (its first seconds are recorded, not scored: restored values carry the old clock)",
          order=115)
def skew_decider(ctx):
    hold_s = 6 if ctx.short else 20
    fra, iad = www("fra"), www("iad")
    for i, spec in enumerate(SKEWS):
        c = ctx.cluster(faketime={"decider1": spec})
        b = c.bounds
        q = ctx.query_loop(c)
        baseline(ctx, c, q)
        if i == 0:
            cert_margin(ctx, c)
        t = q.mark("decider1 at %s, steady" % spec)
        q.expect(t, fra)
        hold(hold_s, t)
        wrong = {d: q.window(d, t, None, fra) for d in c.deciders}
        st = c.status("decider1")
        ctx.note("clock %s on decider1: status dc fra: %s; answers %s" % (
            spec, st.dcs.get("fra", "?") if st else "no status",
            "; ".join("%s %s" % (d, q.summary(d, t)) for d in c.deciders)))
        ctx.check(all(steady(w) for w in wrong.values()),
                  "clock %s on decider1: every responder keeps answering fra for %d s (wrong/unanswered: %s)"
                  % (spec, hold_s, {d: (w["wrong"], w["timeouts"]) for d, w in wrong.items()}))
        ctx.phase(q, "clock %s on decider1: fra down -> iad" % spec, lambda: c.dc_down("fra"), iad, b.failover,
                  before=fra)
        ctx.phase(q, "clock %s on decider1: fra up -> fra" % spec, lambda: c.dc_up("fra"), fra, b.recover,
                  before=iad)
        text = c.config_text(marker=31 + i)
        if abs(_skew_seconds(spec)) <= SIGNATURE_FRESHNESS_S:
            r = c.push(text, decider="decider1", label="skewed", all_deciders=False)
            ctx.check(r.acked, "clock %s: a push through decider1 is acknowledged (%s)" % (spec, r))
        else:
            # Further off than a signed action may be taken within: decider1
            # says so and changes nothing; gtmeshctl, given every decider,
            # takes it through another (the log judges replays, not clocks).
            r = c.push(text, decider="decider1", label="skewed", all_deciders=False)
            ctx.check(r.rc == 1 and "not taken here" in r.err and "nothing was changed" in r.err,
                      "clock %s: decider1 refuses a signed push at its signature's time, saying so, nothing changed "
                      "(rc %s: %s)" % (spec, r.rc, r.err.strip()[-300:]))
            r = c.push(text, decider="decider1", label="skewed", all_deciders=True)
            ctx.check(r.acked and r.by != "decider1",
                      "clock %s: given every decider, gtmeshctl takes the push through another (%s)" % (spec, r))
        if spec == SKEWS[-1]:
            # A clock step across a restart: the restored values were
            # stamped on the old clock.
            p = c.procs["decider1"]
            t = q.mark("decider1 restarted with the right clock (a step of %s)" % spec.replace("-", "+"))
            q.exclude("decider1", t)
            p.faketime = None
            c.restart_decider("decider1")
            t_up = q.mark("decider1 up with the right clock")
            q.exclude("decider1", t, t_up)
            q.expect(t_up, None, ["decider1"], why="restored values stamped an hour off until fresh ones arrive")
            hold(hold_s, t_up)
            # Recorded, not scored: the restored values carry times of the old
            # clock, so they look an hour old until fresh ones arrive (like
            # values that really went stale while a decider was down).
            ctx.note("decider1 restarted with its clock stepped %s (recorded, not scored): %s"
                     % (spec.replace("-", "+"), q.summary("decider1", t_up)))
            w = q.window("decider1", t_up, None, fra)
            secs = q.converged_at(t_up, fra, ["decider1"])
            ctx.check(secs is not None, "after the clock step decider1 answers fra again (%s after its restart)"
                      % util.fmt_s(None if secs is None else secs - t_up))
            q.expect(time.monotonic(), fra)
            after_skews(ctx, c, q)
        ctx.teardown()
