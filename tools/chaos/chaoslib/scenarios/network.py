"""Network faults with nftables: partitions, one-way loss of a link, random
loss, black-holed SYNs, a decider cut from everything."""
import time

from ..cluster import BACKOFF_MAX_S, CONNECTION_TIMEOUT_S, Bounds, www
from ..scenario import scenario
from .health import baseline


def hold(seconds_since, t):
    """Keeps a fault in place until `seconds_since` after t (the fault's
    duration is a scenario parameter, not a synchronisation)."""
    left = t + seconds_since - time.monotonic()
    if left > 0:
        time.sleep(left)


def link_drops(c):
    """Links the deciders saw drop so far (peers down, agents left)."""
    n = 0
    for d in c.deciders:
        log = c.procs[d].log_text()
        n += log.count(" is down") + log.count(" left")
    return n


@scenario("mesh-stability",
          fault="none: the cluster idles, mutual TLS, first with one --peer per pair (each decider names the "
                "ones started before it), then with every decider naming every other (the full membership "
                "Raft needs)",
          prop="no link ever drops (0 peer-down / agent-left events in the decider logs) and every responder "
               "answers fra throughout, with either peer configuration",
          order=5)
def mesh_stability(ctx):
    idle = 12 if ctx.short else 60
    for mode in ("earlier", "all"):
        c = ctx.cluster(peers=mode)
        q = ctx.query_loop(c)
        t = q.mark("idle, --peer %s" % mode)
        before = link_drops(c)
        q.expect(t, www("fra"))
        hold(idle, t)
        drops = link_drops(c) - before
        per = q.score()["per"]
        wrong = sum(per[d]["wrong"] for d in c.deciders)
        ctx.note("--peer %s: %d link drops in %d s, answers %s" % (
            mode, drops, idle, "; ".join("%s %s" % (d, q.summary(d, t)) for d in c.deciders)))
        ctx.check(drops == 0 and wrong == 0, "--peer %s: no link drops (%d) and no wrong answer (%d) in %d s idle"
                  % (mode, drops, wrong, idle))
        ctx.teardown()


@scenario("dc-partition",
          fault="fra's namespace (its agent and backends) partitioned from every decider (nftables drop, both "
                "directions); healed after a while",
          prop="fra's answers fail over to iad within the unreachable bound (connection timeout + "
               "dc-down-after, or staleness, whichever is first); after the heal fra returns within the "
               "reconnect bound (backoff + next SYN retransmission + probes)",
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
    hold(8 if ctx.short else 30, t)
    duration = time.monotonic() - t
    back = b.reconnect + Bounds.syn_retransmit_wait(duration)
    ctx.phase(q, "healed after %.0f s -> fra" % duration, fault[0].heal, fra, back, before=iad)
    ctx.note("a connect() pending during a silent partition only completes at the next SYN retransmission "
             "(1, 3, 7, 15, 31 s...), hence the heal bound %.1f s for a %.0f s partition" % (back, duration))


@scenario("decider-one-way",
          fault="one-way partition: decider1's packets to decider2 dropped (decider2 -> decider1 flows); "
                "meanwhile fra goes down and comes back",
          prop="every responder still converges (decider3 relays) within the failover bound + one connection "
               "timeout; no responder stalls",
          order=40)
def decider_one_way(ctx):
    c = ctx.cluster()
    b = c.bounds
    q = ctx.query_loop(c)
    baseline(ctx, c, q)
    fra, iad = www("fra"), www("iad")
    f = ctx.firewall.one_way(["decider1"], ["decider2"])
    bound = b.failover + CONNECTION_TIMEOUT_S
    ctx.phase(q, "fra down during one-way -> iad", lambda: c.dc_down("fra"), iad, bound, before=fra)
    ctx.phase(q, "fra up during one-way -> fra", lambda: c.dc_up("fra"), fra, b.recover + CONNECTION_TIMEOUT_S,
              before=iad)
    st = c.status("decider1") or ""
    ctx.note("decider1 peers during the fault: " + (st.split("peers:")[1].split("\n")[0].strip()
                                                    if "peers:" in st else "status did not answer"))
    t = q.mark("healed")
    f.heal()
    q.expect(t, fra)
    ok_d = c.status("decider2") is not None
    ctx.check(ok_d, "decider2 answers gtmeshctl status after the heal")


@scenario("decider-loss",
          fault="30 % random loss (nft numgen random mod 100 < 30 drop) on every link of decider1 (to peers "
                "and agents); meanwhile fra goes down and comes back",
          prop="every responder converges within the failover bound + one reconnect backoff (5 s)",
          order=45)
def decider_loss(ctx):
    c = ctx.cluster()
    b = c.bounds
    q = ctx.query_loop(c)
    baseline(ctx, c, q)
    fra, iad = www("fra"), www("iad")
    f = ctx.firewall.loss("decider1", 30)
    ctx.phase(q, "fra down under 30% loss -> iad", lambda: c.dc_down("fra"), iad, b.failover + BACKOFF_MAX_S,
              before=fra)
    ctx.phase(q, "fra up under 30% loss -> fra", lambda: c.dc_up("fra"), fra, b.recover + BACKOFF_MAX_S,
              before=iad)
    f.heal()
    log = c.procs["decider1"].log_text()
    ctx.note("decider1 logged %d peer/agent link losses during the loss" % (log.count(" left") + log.count(" down")))


@scenario("syn-blackhole",
          fault="every SYN between decider1's namespace and the other nodes' mesh ports black-holed (both ways; "
                "the client still gets through), then decider1 killed (-9) and restarted: established "
                "connections are gone, new ones vanish",
          prop="the other deciders do not stall: answers stay fra while fra is healthy, decider2/3 follow a "
               "failover within the failover bound and answer gtmeshctl promptly; decider1's answers are "
               "recorded",
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
    t_kill = q.mark("decider1 killed and restarted behind the SYN black hole")
    c.procs["decider1"].kill9()
    c.restart_decider("decider1")
    t_up = q.mark("decider1 up")
    # Nothing changed in the DCs: decider2/3 should keep answering fra;
    # decider1's answers are recorded, not scored.
    q.expect(t_kill, fra, others)
    q.expect(t_kill, None, ["decider1"])
    hold(6, t_up)
    s = q.score()["per"]
    ctx.check(all(s[d]["wrong"] == 0 and s[d]["answered"] == s[d]["sent"] for d in others),
              "decider2/3 kept answering fra while their peer was unreachable by SYN (%s)" %
              ", ".join("%s %s" % (d, q.summary(d, t_kill)) for d in others))
    for d in others:
        t0 = time.monotonic()
        st = c.status(d)
        took = time.monotonic() - t0
        ctx.check(st is not None and took < 3, "%s answers gtmeshctl status promptly (%.2f s)" % (d, took))
        if st and "peers:" in st:
            ctx.note("%s peers: %s" % (d, st.split("peers:")[1].split("\n")[0].strip()))
    ctx.phase(q, "fra down -> iad on decider2/3", lambda: c.dc_down("fra"), iad, b.failover, before=fra,
              responders=others)
    ctx.note("decider1 after its restart: " + q.summary("decider1", t_up))
    d1 = c.status("decider1") or ""
    ctx.note("decider1 peers: " + (d1.split("peers:")[1].split("\n")[0].strip() if "peers:" in d1 else "no status"))
    t_heal = q.mark("healed")
    for f in faults:
        f.heal()
    q.expect(t_heal, None)
    back = b.reconnect + Bounds.syn_retransmit_wait(t_heal - t_kill)
    secs = q.wait_converged(t_heal, iad, back)
    ctx.converged("heal -> every responder iad", secs, back)


@scenario("isolate-decider",
          fault="decider1 cut from every peer and every agent (nftables, both directions; the client still "
                "reaches it) for longer than staleness and dc-down-after; then healed",
          prop="its responder keeps answering from last-known-good (fra) while isolated; the others keep "
               "answering fra; after the heal it converges with the rest",
          order=60)
def isolate_decider(ctx):
    c = ctx.cluster()
    b = c.bounds
    q = ctx.query_loop(c)
    baseline(ctx, c, q)
    fra = www("fra")
    t = q.mark("decider1 isolated")
    f = ctx.firewall.isolate("decider1")
    q.expect(t, fra)
    duration = max(b.dc_unreachable, b.service_stale) + (6 if ctx.short else 30)
    hold(duration, t)
    s = q.score()["per"]
    ctx.note("decider1 answered while isolated: " + q.summary("decider1", t))
    ctx.check(s["decider1"]["wrong"] == 0 and s["decider1"]["answered"] == s["decider1"]["sent"],
              "isolated decider1 keeps answering last-known-good %s (%d of %d answers otherwise)" %
              (fra, s["decider1"]["wrong"] + s["decider1"]["sent"] - s["decider1"]["answered"], s["decider1"]["sent"]))
    others = [d for d in c.deciders if d != "decider1"]
    ctx.check(all(s[d]["wrong"] == 0 for d in others),
              "the others keep answering fra (%s)" % ", ".join("%s %s" % (d, q.summary(d, t)) for d in others))
    back = b.reconnect + Bounds.syn_retransmit_wait(time.monotonic() - t)
    ctx.phase(q, "healed -> fra everywhere", f.heal, fra, back, before="any")
