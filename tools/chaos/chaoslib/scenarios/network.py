"""Network faults with nftables: partitions, one-way loss of a link, random
loss, black-holed SYNs, a decider cut from everything; and the idle mesh."""
import time

from .. import util
from ..cluster import BACKOFF_MAX_S, CONNECT_TIMEOUT_S, IDLE_TIMEOUT_S, www
from ..dns import steady
from ..scenario import scenario
from ..steps import baseline, hold, marker

# Log events that mean a link (or the majority) was lost.
LINK_LOSS = ("peer-down", "decider-disconnected", "agent-left", "no-majority")


def link_events(c, since_mark, kinds=LINK_LOSS, deciders=None, about=None):
    """{decider: [log line]} of link-loss events after the marker line
    `since_mark` (written by q.mark / c.mark). `about`: only lines that
    name one of these strings (node names or addresses)."""
    out = {}
    for d in deciders or c.deciders:
        # Match `about` after the "gtmesh decider NAME: " prefix.
        lines = [line for kind, line in c.log_events(d, since_mark) if kind in kinds and
                 (about is None or any(a in line.split(": ", 1)[-1] for a in about))]
        out[d] = lines
    return out


def peers_note(c, d):
    st = c.status(d)
    return "%s peers: %s; consensus: %s" % (d, st.peers_line(), st.consensus_line()) if st else "%s: no status" % d


@scenario("mesh-stability",
          fault="none: the cluster idles under mutual TLS with the full Raft membership (every decider --peer "
                "every other; then a second cluster where each also names itself, which must be de-duplicated)",
          prop="no link flaps: 0 peer-down / decider-disconnected / agent-left / no-majority events, 0 idle "
               "timeouts or failed handshakes, the Raft term never changes (no re-election), every peer "
               "connected in every status, and every responder answers fra throughout",
          order=5)
def mesh_stability(ctx):
    idle = 12 if ctx.short else 60
    for variant, peer_self in (("--peer every other decider", False), ("--peer every decider, itself included",
                                                                       True)):
        c = ctx.cluster(peer_self=peer_self)
        q = ctx.query_loop(c)
        label = "idle, %s" % variant
        before = {d: c.status(d) for d in c.deciders}
        t = q.mark(label)
        q.expect(t, www("fra"))
        hold(idle, t)
        after = {d: c.status(d) for d in c.deciders}
        events = link_events(c, label)
        n_events = sum(len(v) for v in events.values())
        wrong = {d: q.window(d, t, None, www("fra")) for d in c.deciders}
        bad_answers = sum(w["wrong"] for w in wrong.values()) + sum(not steady(w) for w in wrong.values())
        terms = {d: (before[d].term if before[d] else None, after[d].term if after[d] else None) for d in c.deciders}
        counters = {}
        for d in c.deciders:
            if before[d] and after[d]:
                counters[d] = {k: after[d].mesh.get(k, 0) - before[d].mesh.get(k, 0)
                               for k in ("idle timeouts", "failed handshakes", "handshake timeouts",
                                         "connections accepted")}
        not_connected = {d: after[d].peers_line() for d in c.deciders
                         if not after[d] or any(v != "connected" for v in after[d].peers.values())
                         or len(after[d].peers) != len(c.deciders) - 1}
        ctx.note("%s: %d link events in %d s idle%s; Raft terms (before, after) %s; mesh counter deltas %s; "
                 "answers %s" % (variant, n_events, idle,
                                 (" (" + "; ".join(l for v in events.values() for l in v[:2]) + ")") if n_events
                                 else "", terms, counters,
                                 "; ".join("%s %s" % (d, q.summary(d, t)) for d in c.deciders)))
        ctx.check(n_events == 0, "%s: no link drops or majority losses in %d s idle (%d)" % (variant, idle, n_events))
        ctx.check(all(v.get("idle timeouts", 0) == 0 and v.get("failed handshakes", 0) == 0 and
                      v.get("handshake timeouts", 0) == 0 for v in counters.values()) and
                  len(counters) == len(c.deciders),
                  "%s: no idle timeouts or failed handshakes (%s)" % (variant, counters))
        ctx.check(all(a == b and a is not None for a, b in terms.values()),
                  "%s: the Raft term stays the same on every decider (no re-election): %s" % (variant, terms))
        ctx.check(not not_connected, "%s: every decider shows every other connected and no more (%s)"
                  % (variant, not_connected or "yes"))
        ctx.check(bad_answers == 0, "%s: every responder answered fra throughout (wrong, unanswered: %s)"
                  % (variant, {d: (w["wrong"], w["timeouts"]) for d, w in wrong.items()}))
        ctx.teardown()


@scenario("dc-partition",
          fault="fra's namespace (its agent and backends) partitioned from every decider (nftables drop, both "
                "directions); healed after a while",
          prop="fra's answers fail over to iad within the unreachable bound (on decider1, fra's agent's decider: "
               "idle timeout + dc-down-after or staleness, whichever is first; on the others: staleness); after the "
               "heal fra returns within the reconnect bound (connect timeout + backoff ceiling + probes)",
          ctest=True, order=30)
def dc_partition(ctx):
    c = ctx.cluster()
    b = c.bounds
    q = ctx.query_loop(c)
    baseline(ctx, c, q)
    fra, iad = www("fra"), www("iad")
    fault = []
    t, _ = ctx.phase(q, "fra partitioned -> iad", lambda: fault.append(ctx.firewall.partition(["fra"], c.deciders)),
                     iad, b.dc_unreachable, before=fra)
    ctx.also_within(q, t, "fra partitioned -> iad on decider1 (fra's agent's decider)", iad, b.dc_unreachable_own,
                    ["decider1"])
    hold(8 if ctx.short else 30, t)
    duration = time.monotonic() - t
    ctx.phase(q, "healed after %.0f s -> fra" % duration, fault[0].heal, fra, b.reconnect, before=iad)
    ctx.note("bounds: " + b.text)


@scenario("decider-one-way",
          fault="one-way partition from the Raft leader to one follower: the leader's packets to it are dropped "
                "(the follower's packets to the leader arrive; TCP between them dies both ways); meanwhile fra goes "
                "down and comes back, and a config is pushed with that follower named first to gtmeshctl",
          prop="every responder follows fra's failure and recovery within the failover/recovery bound + one idle "
               "timeout (the third decider relays measurements); the push is acknowledged and served at once by "
               "the leader and the third decider; the cut-off follower reports NO MAJORITY while it cannot hear "
               "the leader (it never claims to be current), never serves anything but committed configs, and "
               "serves the push within the reconnect bound after the heal; every decider ends with the same history",
          order=40)
def decider_one_way(ctx):
    c = ctx.cluster()
    b = c.bounds
    q = ctx.query_loop(c)
    baseline(ctx, c, q)
    fra, iad = www("fra"), www("iad")
    ok, _, leader = util.wait_for(c.leader, b.new_leader, 0.2)
    ctx.require(ok, "a Raft leader")
    follower = [d for d in c.deciders if d != leader][0]
    third = [d for d in c.deciders if d not in (leader, follower)][0]
    ctx.note("leader %s, cut-off follower %s" % (leader, follower))
    qc = ctx.query_loop(c, name="cfg.chaos.example", rate=5)
    tc = qc.mark("one-way %s -> %s" % (leader, follower))
    qc.expect(tc, marker(1))
    f = ctx.firewall.one_way([leader], [follower])
    bound = b.failover + IDLE_TIMEOUT_S
    ctx.phase(q, "fra down during one-way -> iad", lambda: c.dc_down("fra"), iad, bound, before=fra)
    ctx.phase(q, "fra up during one-way -> fra", lambda: c.dc_up("fra"), fra, b.recover + IDLE_TIMEOUT_S,
              before=iad)
    # A decider serves the push once it applies it, which can be before
    # gtmeshctl hears the acknowledgement: either marker from the push on.
    qc.expect(qc.mark("push with %s named first" % follower), {marker(1), marker(7)})
    t0 = time.monotonic()
    r = c.push(c.config_text(marker=7), decider=follower, label="one-way")
    took = time.monotonic() - t0
    ctx.check(r.acked, "a push with %s named first is acknowledged (%s, %.1f s)" % (follower, r, took))
    if r.acked:
        ctx.phase(qc, "pushed config served by %s and %s" % (leader, third), None, marker(7), 5.0,
                  before=marker(1), responders=[leader, third])
        qc.expect(tc, {marker(1), marker(7)}, [follower])
    st = c.status(follower)
    ctx.note("%s during the one-way: config version %s; %s" % (follower, st.version if st else "?",
                                                               st.consensus_line() if st else "no status"))
    behind = st is not None and r.acked and st.version is not None and st.version < r.version
    if behind:
        ctx.note("%s cannot get the committed push while its leader's packets are dropped, although it reaches "
                 "%s (a majority with itself): Raft only replicates from the leader, and %s, which hears the "
                 "leader, refuses to elect anyone else" % (follower, third, third))
        ctx.check(st.no_majority, "%s, behind, reports NO MAJORITY (%s)" % (follower, st.consensus_line()))
    t = qc.mark("healed")
    f.heal()
    if r.acked:
        secs = qc.wait_converged(t, marker(7), 2 * (b.reconnect + b.new_leader), [follower])
        ctx.converged("healed -> %s serves the push" % follower, secs, b.reconnect + b.new_leader)
    ok, _, _ = util.wait_for(lambda: c.ready(), b.reconnect + b.new_leader, 0.3)
    hist = {d: [(h.version, h.sha) for h in (c.config_history(d) or [])] for d in c.deciders}
    ctx.check(ok and len({tuple(v) for v in hist.values()}) == 1 and
              (not r.acked or (r.version, r.sha) in hist[follower]),
              "after the heal every decider holds the same history, the push at v%s included (%s)"
              % (r.version, {d: len(v) for d, v in hist.items()}))
    ctx.configs(1 if r.acked else 0, 0 if not r.acked or all((r.version, r.sha) in v for v in hist.values()) else 1)


@scenario("decider-loss",
          fault="30 % random loss (nft numgen random mod 100 < 30 drop) on every link of decider1 (to peers "
                "and agents); meanwhile fra goes down and comes back",
          prop="every responder converges within the failover bound + connect timeout + one reconnect backoff "
               "ceiling (a link that times out must come back)",
          order=45)
def decider_loss(ctx):
    c = ctx.cluster()
    b = c.bounds
    q = ctx.query_loop(c)
    baseline(ctx, c, q)
    fra, iad = www("fra"), www("iad")
    label = "30% loss on decider1"
    c.mark(label)
    f = ctx.firewall.loss("decider1", 30)
    extra = CONNECT_TIMEOUT_S + BACKOFF_MAX_S
    ctx.phase(q, "fra down under 30% loss -> iad", lambda: c.dc_down("fra"), iad, b.failover + extra, before=fra)
    ctx.phase(q, "fra up under 30% loss -> fra", lambda: c.dc_up("fra"), fra, b.recover + extra, before=iad)
    f.heal()
    ev = link_events(c, label)
    ctx.note("link events during the loss: %s" % {d: len(v) for d, v in ev.items()})


@scenario("syn-blackhole",
          fault="every SYN between decider1's namespace and the other nodes' mesh ports black-holed (both ways; "
                "the client still gets through), then decider1 killed (-9) and restarted: its established "
                "connections are gone and new ones vanish; fra goes down meanwhile",
          prop="the other deciders keep their links (no link event between decider2, decider3 and their "
               "agents), answer gtmeshctl and acknowledge a push promptly, and follow the failover within the "
               "failover bound; decider1, alone, answers last-known-good (fra) until the heal and then "
               "converges within the reconnect bound",
          order=50)
def syn_blackhole(ctx):
    c = ctx.cluster()
    b = c.bounds
    q = ctx.query_loop(c)
    baseline(ctx, c, q)
    fra, iad = www("fra"), www("iad")
    others = [d for d in c.deciders if d != "decider1"]
    mesh_nodes = [n for n in c.topo.hosts if n not in ("decider1", "client")]
    port = c.spec.mesh_port
    faults = [ctx.firewall.syn_blackhole("decider1", port, from_nodes=mesh_nodes)]
    for d in others:
        faults.append(ctx.firewall.syn_blackhole(d, port, from_nodes=["decider1"]))
    label = "decider1 killed and restarted behind the SYN black hole"
    t_kill = q.mark(label)
    c.procs["decider1"].kill9()
    q.exclude("decider1", t_kill)
    c.restart_decider("decider1")
    t_up = q.mark("decider1 up")
    q.exclude("decider1", t_kill, t_up)
    # Nothing changed in the DCs: everyone keeps answering fra; decider1
    # from its restored state (it cannot reach anyone).
    q.expect(t_kill, fra)
    hold(6, t_up)
    for d in others:
        w = q.window(d, t_kill, None, fra)
        ctx.check(steady(w), "%s kept answering fra while decider1 was unreachable by "
                  "SYN (%s)" % (d, q.summary(d, t_kill)))
    for d in others:
        t0 = time.monotonic()
        st = c.status(d, attempts=1)
        took = time.monotonic() - t0
        ctx.check(st is not None and took < 3, "%s answers gtmeshctl status promptly (%.2f s)" % (d, took))
        if st:
            ctx.note("%s peers: %s; consensus: %s" % (d, st.peers_line(), st.consensus_line()))
    t0 = time.monotonic()
    r = c.push(c.config_text(marker=9), decider="decider2", label="behind-blackhole", all_deciders=False)
    took = time.monotonic() - t0
    ctx.check(r.acked and took < 5, "a push through decider2 is acknowledged promptly (%s in %.1f s)" % (r, took))
    ctx.phase(q, "fra down -> iad on decider2/3", lambda: c.dc_down("fra"), iad, b.failover, before=fra,
              responders=others)
    q.expect(t_kill, fra, ["decider1"])  # alone: last-known-good
    hold(3, time.monotonic())
    w1 = q.window("decider1", t_up, None, fra)
    st1 = c.status("decider1")
    ctx.note("decider1 after its restart: %s; %s" % (q.summary("decider1", t_up),
                                                     "status: %s; %s" % (st1.isolated, st1.consensus_line())
                                                     if st1 else "no status"))
    ctx.check(steady(w1),
              "decider1, restarted and alone, answers last-known-good fra (%s)" % q.summary("decider1", t_up))
    ev = link_events(c, label, deciders=others, about=others + [c.mesh_addr(d) for d in others] +
                     ["fra/", "iad/", "sin/"])
    # fra's agent preferred decider1: its move to decider2 is a new link,
    # not a loss; a loss would be a line naming decider2/3 or an agent.
    ctx.check(all(not v for v in ev.values()), "decider2/3 kept their links to each other and their agents (%s)"
              % ({d: v[:2] for d, v in ev.items() if v} or "no link event"))
    t_heal = q.mark("healed")
    for f in faults:
        f.heal()
    q.expect(t_heal, {fra, iad}, ["decider1"])
    secs = q.wait_converged(t_heal, iad, 2 * b.reconnect)
    ctx.converged("heal -> every responder iad", secs, b.reconnect)
    q.expect(t_heal + b.reconnect, iad, ["decider1"])
    ctx.phase(q, "fra up -> fra everywhere", lambda: c.dc_up("fra"), fra, b.recover, before=iad)
    if r.acked:
        # The push reaches decider1 through the Raft log once the leader's
        # link to it is back (its reconnect backs off while the SYNs vanish)
        # and a heartbeat finds it behind: polled within the reconnect and
        # election bounds, not read once (it failed 1 of 3 full runs read
        # 0.6 s after the heal, the entry still on its way).
        bound = b.reconnect + b.new_leader

        def holds():
            hist = c.config_history("decider1") or []
            return any(h.version == r.version and h.sha == r.sha for h in hist)

        ok, secs, _ = util.wait_for(holds, bound, 0.2)
        ctx.check(ok, "after the heal decider1 holds the push acknowledged without it (v%d) %s"
                  % (r.version, "after %.1f s (bound %.0f s)" % (secs, bound) if ok else "not within %.0f s" % bound))
        ctx.configs(1, 0 if ok else 1)


@scenario("isolate-decider",
          fault="decider1 cut from every peer and every agent (nftables, both directions; the client still "
                "reaches it) for longer than staleness and dc-down-after; fra goes down meanwhile; healed; fra "
                "healthy again",
          prop="the isolated decider notices it (status ISOLATED, NO MAJORITY), refuses a push cleanly and "
               "answers last-known-good (fra) throughout, never fail_safe; the majority side keeps answering fra "
               "and follows fra's failure to iad within the failover bound; after the heal decider1 converges "
               "to iad within the reconnect bound, and to fra with the rest",
          order=60)
def isolate_decider(ctx):
    c = ctx.cluster()
    b = c.bounds
    q = ctx.query_loop(c)
    baseline(ctx, c, q)
    fra, iad = www("fra"), www("iad")
    others = [d for d in c.deciders if d != "decider1"]
    t = q.mark("decider1 isolated")
    f = ctx.firewall.isolate("decider1")
    q.expect(t, fra)
    duration = max(b.dc_unreachable, b.service_stale, b.host_stale) + (6 if ctx.short else 30)
    ok, secs, st = util.wait_for(lambda: (lambda s: s if s and s.isolated and s.no_majority else None)(
        c.status("decider1", attempts=1)), 10, 0.3)
    ctx.check(ok, "decider1 reports ISOLATED and NO MAJORITY (after %.1f s: %s; %s)" % (
        secs, st.isolated if st else "-", st.consensus_line() if st else "no status"))
    hold(duration, t)
    w = q.window("decider1", t, None, fra)
    ctx.note("decider1 answered while isolated (%.0f s): %s" % (duration, q.summary("decider1", t)))
    ctx.check(steady(w),
              "isolated decider1 keeps answering last-known-good %s for %.0f s (%d wrong, %d unanswered of %d)"
              % (fra, duration, w["wrong"], w["timeouts"], w["sent"]))
    ctx.check(all(q.window(d, t, None, fra)["wrong"] == 0 for d in others),
              "the others keep answering fra (%s)" % ", ".join("%s %s" % (d, q.summary(d, t)) for d in others))
    st = c.status("decider1")
    if st:
        ctx.note("isolated decider1 status: %s; %s" % (st.isolated, "; ".join("dc %s: %s" % kv for kv in
                                                                               st.dcs.items())))
    r = c.push(c.config_text(marker=11), decider="decider1", label="isolated", all_deciders=False, retry_for_s=3)
    ctx.check(r.clean_failure and r.outcome == "no-ack", "a push to the isolated decider alone is not acknowledged "
              "and says so (%s)" % r)
    # The majority side sees fra fail; the isolated decider cannot.
    t_down = q.mark("fra down while decider1 is isolated")
    q.expect(t_down, fra, ["decider1"])
    ctx.phase(q, "fra down -> iad on decider2/3", lambda: c.dc_down("fra"), iad, b.failover, before=fra,
              responders=others)
    hold(3, time.monotonic())
    w = q.window("decider1", t_down, None, fra)
    ctx.check(steady(w), "isolated decider1 still answers last-known-good fra (%s)"
              % q.summary("decider1", t_down))
    t_heal = q.mark("healed")
    f.heal()
    q.expect(t_heal, {fra, iad}, ["decider1"])
    secs = q.wait_converged(t_heal, iad, 2 * b.reconnect, ["decider1"])
    ctx.converged("healed -> decider1 iad", secs, b.reconnect)
    q.expect(t_heal + b.reconnect, iad, ["decider1"])
    ctx.phase(q, "fra up -> fra everywhere", lambda: c.dc_up("fra"), fra, b.recover, before=iad)
    if r.acked:
        ctx.configs(1, None)
