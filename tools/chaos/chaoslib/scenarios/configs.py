"""Config pushes: nothing is served from a config that failed validation;
acknowledged pushes survive kill -9 at any moment."""
import os
import shutil
import subprocess
import time

from .. import history, util
from ..cluster import CFG, SRC, PushResult
from ..dns import steady
from ..scenario import scenario
from ..steps import acked_lost, history_has, marker


GEO = os.path.join("geo", "chaos.mmdb")   # relative: resolved against each decider's own folder


@scenario("invalid-push",
          fault="configs that fail validation, pushed every way: one gtmeshctl rejects locally (ttl -5); one that "
                "validates where gtmeshctl runs but not on the decider it is pushed to (a geo database file that "
                "decider lacks); one that validates on the pushing decider and the leader, is committed, and does "
                "not load on the third decider (the file is missing in its folder only); one that the pushing "
                "decider can load and the leader cannot",
          prop="nothing is served from a config that failed validation: the first two are refused (not "
               "acknowledged, rc 1) and change nothing anywhere (same history, same marker answered); the third "
               "is acknowledged and served by the two while the third reports CONFIG NOT APPLIED and keeps "
               "answering the last config that loads; the fourth is refused by the leader (rc 1, nothing "
               "committed); a valid push afterwards is served everywhere",
          order=90)
def invalid_push(ctx):
    c = ctx.cluster()
    q = ctx.query_loop(c, name=CFG, rate=5)
    t = q.mark("baseline")
    q.expect(t, marker(1))
    ctx.require(q.wait_converged(t, marker(1), 10) is not None, "every responder answers the bootstrap marker")
    before = {d: c.config_history(d) for d in c.deciders}
    pushed = []
    # 1. Invalid on its face: gtmeshctl refuses before sending.
    bad = c.config_text(marker=2).replace("ttl: 5", "ttl: -5", 1)
    r = c.push(bad, label="bad-ttl")
    ctx.check(r.outcome == "invalid" and r.rc == 1, "a config with ttl -5 is refused by gtmeshctl, nothing pushed "
              "(%s)" % r)
    # 2. Valid where gtmeshctl runs (the file is next to the pushed YAML),
    #    invalid on the decider it reaches (not in decider2's folder).
    push_dir = os.path.join(c.dir, "pushes")
    os.makedirs(os.path.join(push_dir, "geo"), exist_ok=True)
    mmdb = os.path.join(SRC, "tests", "data", "test.mmdb")
    shutil.copy(mmdb, os.path.join(push_dir, GEO))
    r = c.push(c.config_text(marker=3, geo=GEO), decider="decider2", label="geo-missing", all_deciders=False)
    ctx.check(r.outcome == "rejected" and r.rc == 1, "a config whose geo database decider2 lacks is rejected by "
              "decider2 (%s)" % r)
    # Nothing changed anywhere, for a while.
    t_hold = time.monotonic()
    util.wait_for(lambda: False, 3, 0.5)  # the fault's duration: 3 s of answers to score
    after = {d: c.config_history(d) for d in c.deciders}
    ctx.check(after == before and all(h is not None for h in after.values()),
              "every decider kept its history: %s" % {d: [h.version for h in (v or [])] for d, v in after.items()})
    w = {d: q.window(d, t_hold, None, marker(1)) for d in c.deciders}
    ctx.check(all(x["wrong"] == 0 for x in w.values()), "no responder answered a refused config's marker (%s)" %
              "; ".join("%s %s" % (d, q.summary(d, t)) for d in c.deciders))
    # 3. Valid on the leader and one other decider (the file is in their
    #    folders), committed, and it does not load on the third (a
    #    follower: the leader validates every change before it is appended).
    ok, _, leader = util.wait_for(c.leader, 10, 0.3)
    lacking = "decider2" if leader != "decider2" else "decider3"
    have = [d for d in c.deciders if d != lacking]
    pusher = next(d for d in have if d != leader)
    for d in have:
        os.makedirs(os.path.join(c.decider_dir(d), "geo"), exist_ok=True)
        shutil.copy(mmdb, os.path.join(c.decider_dir(d), GEO))
    t3 = q.mark("committed config that %s cannot load" % lacking)
    q.expect(t3, {marker(1), marker(4)}, have)
    q.expect(t3, marker(1), [lacking])
    r = c.push(c.config_text(marker=4, geo=GEO), decider=pusher, label="geo-on-two", all_deciders=False)
    pushed.append(r)
    ctx.check(r.acked, "a config that validates on %s and the leader %s is acknowledged (%s)" % (pusher, leader, r))
    if r.acked:
        ctx.phase(q, "served by %s" % "/".join(have), None, marker(4), 5.0, before=marker(1), responders=have)
        q.expect(t3, marker(1), [lacking])
        ok, secs, st = util.wait_for(lambda: (lambda s: s if s and s.config_error else None)(
            c.status(lacking, attempts=1)), 10, 0.3)
        ctx.check(ok, "%s reports CONFIG NOT APPLIED (%s)" % (lacking, st.config_error if st else "no such line"))
        st = c.status(lacking)
        ctx.check(st is not None and st.version == 1, "%s keeps serving version 1 (status: config version %s)"
                  % (lacking, st.version if st else "?"))
        ctx.check(history_has(c, lacking, r.version, r.sha), "%s's committed history has v%d all the same"
                  % (lacking, r.version))
        util.wait_for(lambda: False, 2, 0.5)  # 2 s more of its answers
        w2 = q.window(lacking, t3, None, marker(1))
        ctx.check(steady(w2), "%s never answered the config it cannot load (%s)" % (lacking, q.summary(lacking, t3)))
    # 3b. The leader cannot load it, the decider it is pushed to can: the
    #     leader refuses it before it is appended (rc 1, nothing committed).
    ok, _, leader = util.wait_for(c.leader, 10, 0.3)
    if leader:
        os.remove(os.path.join(c.decider_dir(leader), GEO))
        pusher = next(d for d in have if d != leader)
        before3 = {d: c.config_history(d) for d in c.deciders}
        r = c.push(c.config_text(marker=6, geo=GEO), decider=pusher, label="geo-not-on-leader", all_deciders=False)
        after3 = {d: c.config_history(d) for d in c.deciders}
        ctx.check(r.outcome == "rejected" and r.rc == 1 and "refused by the leader" in r.err and after3 == before3,
                  "a config the leader %s cannot load, pushed through %s, is refused by the leader and nothing is "
                  "committed (%s)" % (leader, pusher, r))
    else:
        ctx.check(False, "a leader for the push the leader cannot load")
    # 4. A valid push afterwards is served everywhere, the third included.
    res = []
    ctx.phase(q, "valid push served everywhere",
              lambda: res.append(c.push(c.config_text(marker=5), decider="decider3", label="valid")),
              marker(5), 5.0, before={marker(1), marker(4)})
    r = res[0]
    pushed.append(r)
    ctx.check(r.acked, "a valid push is acknowledged (%s)" % r)
    st = c.status(lacking)
    ctx.check(st is not None and not st.config_error and st.version == r.version,
              "%s applies it: version %s, %s" % (lacking, st.version if st else "?",
                                                       "CONFIG NOT APPLIED: " + st.config_error
                                                       if st and st.config_error else "no config error"))
    ctx.configs(sum(1 for x in pushed if x.acked), acked_lost(c, pushed, c.bounds.applied_everywhere))


KILL_MOMENTS = ("target-before-ack", "target-after-ack", "other-before-ack", "other-after-ack",
                "leader-before-ack", "leader-after-ack", "majority-before-ack", "none")


@scenario("push-durability",
          fault="config pushes (gtmeshctl given every decider, the round's target first) with kill -9 at random "
                "moments: of the target, of another decider or of the Raft leader, before or after the "
                "acknowledgement, or of two deciders at once before it (no majority for 0.5-3 s) (>= 100 rounds; "
                "10 in --short); a killed decider is restarted at once (after the outage for two)",
          prop="0 acknowledged pushes lost: `gtmeshctl configs` on every decider shows every acknowledged config "
               "(by SHA-256) at its acknowledged version, versions in acknowledgement order, no config twice (a "
               "retried push is applied once), the same history on every decider; every responder serves the "
               "newest version at the end",
          ctest=True, order=200)
def push_durability(ctx):
    rounds = 10 if ctx.short else 100
    c = ctx.cluster()
    rng = ctx.rng
    acked = []      # (version, sha, round, target)
    results = []
    moments = {m: 0 for m in KILL_MOMENTS}
    kills = 0
    raced = 0       # before-ack kills that came after gtmeshctl had already finished
    outcomes = {}
    t_start = time.monotonic()
    for r in range(rounds):
        target = rng.choice(c.deciders)
        moment = rng.choice(KILL_MOMENTS)
        path, sha = c.write_push_file(c.config_text(marker=r + 2), "r%03d" % r)
        victims = []
        if moment.startswith("target"):
            victims = [target]
        elif moment.startswith("other"):
            victims = [rng.choice([d for d in c.deciders if d != target])]
        elif moment.startswith("leader"):
            _, _, leader = util.wait_for(c.leader, c.bounds.new_leader, 0.2)
            victims = [leader] if leader else []
        elif moment.startswith("majority"):
            victims = rng.sample(c.deciders, 2)
        outage = rng.uniform(0.5, 3.0) if len(victims) == 2 else 0.0
        moments[moment] += 1
        c.mark("round %d: push to %s, %s (%s)" % (r, target, moment, ", ".join(victims) or "-"))
        p = subprocess.Popen(c.push_argv(path, target, timeout_s=5), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True)
        if moment.endswith("before-ack") and victims:
            # A random moment while the push is in flight (gtmeshctl start,
            # TLS handshake, validation, the Raft round trip, the reply).
            time.sleep(rng.uniform(0.0, 0.3))
            if p.poll() is not None:
                raced += 1
            for v in victims:
                if c.procs[v].alive():
                    c.procs[v].kill9()
                    kills += 1
            if outage:
                # Two of three gone: no majority for the outage (a stated
                # duration, the fault's parameter); gtmeshctl keeps retrying.
                time.sleep(outage)
            for v in victims:
                if not c.procs[v].alive():
                    c.start_decider(v)
        try:
            out, err = p.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            p.kill()
            out, err = p.communicate()
        res = PushResult(target, path, sha, p.returncode, out, err)
        results.append(res)
        outcomes[res.outcome] = outcomes.get(res.outcome, 0) + 1
        if res.acked:
            acked.append((res.version, sha, r, target))
        if moment.endswith("after-ack") and victims:
            time.sleep(rng.uniform(0.0, 0.05))
            for v in victims:
                if c.procs[v].alive():
                    c.procs[v].kill9()
                    kills += 1
                    c.start_decider(v)
        util.log("round %d: push to %s, %s (%s%s): %s" % (r, target, moment, ", ".join(victims) or "-",
                                                         ", %.1f s without a majority" % outage if outage else "",
                                                         res))
        for d in c.deciders:
            if not c.procs[d].alive():
                ctx.check(False, "%s is running after round %d (it exited with %s)"
                          % (d, r, c.procs[d].returncode()))
                c.start_decider(d)
    seconds = time.monotonic() - t_start
    # Settle: a leader, every decider connected and caught up (bounded).
    t_settle = time.monotonic()

    def caught_up():
        sts = c.ready()
        if not sts:
            return None
        applied = {st.applied for st in sts.values()}
        versions = {st.version for st in sts.values()}
        return sts if len(applied) == 1 and len(versions) == 1 else None

    ok, _, sts = util.wait_for(caught_up, 30, 0.3)
    settle = time.monotonic() - t_settle
    ctx.converged("every decider on one log index after the last round", settle if ok else None, None)
    if sts:
        ctx.note("at the end: %s" % {d: "v%d, applied %d, %s" % (st.version, st.applied, st.role)
                                     for d, st in sts.items()})
    histories = {d: c.config_history(d) for d in c.deciders}
    result = history.check([(v, sha) for v, sha, _, _ in acked],
                           {d: None if h is None else [(x.version, x.sha) for x in h] for d, h in histories.items()})
    lost = result["lost"]
    ctx.configs(len(acked), len(lost))
    ctx.note("%d rounds in %.0f s, %d kills (%s; %d before-ack kills came after gtmeshctl had finished), outcomes "
             "%s" % (rounds, seconds, kills, ", ".join("%s %d" % kv for kv in moments.items() if kv[1]), raced,
                     outcomes))
    if result["conflicts"]:
        ctx.note("conflicting acknowledgements: " + "; ".join(result["conflicts"][:3]))
    if result["order_violations"]:
        ctx.note("acknowledgement order != version order: " + "; ".join(result["order_violations"][:3]))
    for d, miss in result["missing"].items():
        ctx.note("%s: %s" % (d, "; ".join(miss[:3])))
    for i in lost[:5]:
        v, sha, rnd, target = acked[i]
        ctx.note("lost: round %d, v%d (%s) acknowledged through %s" % (rnd, v, sha[:12], target))
    ctx.check(not lost, "0 acknowledged pushes lost (%d lost of %d acknowledged)" % (len(lost), len(acked)))
    ctx.check(not result["order_violations"] and not result["conflicts"], "acknowledgement order is version order")
    ctx.check(not result["unreachable"], "every decider answered `gtmeshctl configs` at the end (%s)"
              % (result["unreachable"] or "yes"))
    # No config twice (a retried push is applied once), the same history everywhere.
    dups = {}
    for d, h in histories.items():
        seen = {}
        for x in h or []:
            seen.setdefault(x.sha, []).append(x.version)
        twice = {sha[:12]: vs for sha, vs in seen.items() if len(vs) > 1}
        if twice:
            dups[d] = twice
    ctx.check(not dups, "no pushed config was committed twice (%s)" % (dups or "none"))
    keyed = {d: [(x.version, x.sha, x.index) for x in h] for d, h in histories.items() if h is not None}
    same = len({tuple(v) for v in keyed.values()}) == 1
    ctx.check(same, "every decider shows the same history (%s)" % {d: len(v) for d, v in keyed.items()})
    committed_unacked = sum(1 for res in results if not res.acked and keyed and
                            any(sha == res.sha for _, sha, _ in next(iter(keyed.values()))))
    ctx.note("%d of %d pushes not acknowledged; %d of those were committed all the same (allowed: gtmeshctl says "
             "it may still be applied)" % (sum(1 for x in results if not x.acked), rounds, committed_unacked))
    # Every responder serves the newest version.
    if keyed:
        newest = max(next(iter(keyed.values())))
        hist = next(h for h in histories.values() if h)
        newest_rec = [x for x in hist if x.version == newest[0]][0]
        rnd = next((i for i, res in enumerate(results) if res.sha == newest_rec.sha), None)
        if rnd is not None:
            want = marker(rnd + 2)
            ok, secs, _ = util.wait_for(lambda: all(v == want for v in c.query_all(CFG).values()), 10, 0.3)
            ctx.check(ok, "every responder serves the newest version v%d (%s)" % (
                newest[0], want if ok else c.query_all(CFG)))
