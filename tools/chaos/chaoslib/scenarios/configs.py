"""Config pushes: rejected configs are never served; acknowledged pushes
survive kill -9 at any moment."""
import os
import shutil
import subprocess
import time

from .. import history, util
from ..cluster import CFG, SRC, PushResult, marker_address
from ..dns import A
from ..scenario import scenario


def marker(n):
    return A(marker_address(n))


@scenario("invalid-push",
          fault="pushes of configs that fail validation: one gtmeshctl rejects locally, one that validates on "
                "the operator's machine but not on the deciders (a geo database they do not have)",
          prop="nothing is served from a config that failed validation: every responder keeps answering the "
               "active config's marker, every decider keeps its version; a valid push afterwards is served "
               "everywhere",
          order=90)
def invalid_push(ctx):
    c = ctx.cluster()
    q = ctx.query_loop(c, name=CFG, rate=5)
    t = q.mark("baseline")
    q.expect(t, marker(1))
    ctx.require(q.wait_converged(t, marker(1), 10) is not None, "every responder answers the bootstrap marker")
    before = {d: c.config_version(d) for d in c.deciders}
    # 1. Invalid on its face: gtmeshctl refuses before sending.
    bad = c.config_text(marker=2).replace("ttl: 5", "ttl: -5", 1)
    r = c.push(bad, label="bad-ttl")
    ctx.check(not r.acked and "nothing was pushed" in r.err, "a config with ttl -5 is rejected locally (%s)"
              % r.err.strip().splitlines()[-1:])
    # 2. Valid where gtmeshctl runs, invalid on every decider.
    push_dir = os.path.join(c.dir, "pushes")
    os.makedirs(push_dir, exist_ok=True)
    shutil.copy(os.path.join(SRC, "tests", "data", "test.mmdb"), os.path.join(push_dir, "chaos-geo.mmdb"))
    r = c.push(c.config_text(marker=3, geo="chaos-geo.mmdb"), decider="decider2", label="geo-missing")
    ctx.check(not r.acked and r.rc != 0, "a config whose geo database the deciders lack is rejected by the "
              "decider (%s)" % (r.err.strip().splitlines()[:1] or r.out.strip()[:100]))
    # Nothing changed anywhere, for a while.
    hold_until = time.monotonic() + 3
    while time.monotonic() < hold_until:
        time.sleep(0.2)
    after = {d: c.config_version(d) for d in c.deciders}
    ctx.check(after == before, "every decider kept its version: before %s, after %s" % (
        {d: v[0] if v else None for d, v in before.items()}, {d: v[0] if v else None for d, v in after.items()}))
    s = q.score()
    ctx.check(s["wrong"] == 0, "no responder ever answered a rejected config's marker (%s)" %
              "; ".join(s["wrong_examples"][:2]))
    # 3. A valid push is served everywhere.
    r = c.push(c.config_text(marker=4), decider="decider3", label="valid")
    ctx.check(r.acked, "a valid push is acknowledged (%s)" % r)
    ctx.phase(q, "valid push served", None, marker(4), 5.0, before=marker(1))
    ctx.configs(1 if r.acked else 0, 0 if all((c.config_version(d) or (0,))[0] == r.version for d in c.deciders)
                else 1)


KILL_MOMENTS = ("target-before-ack", "target-after-ack", "other-before-ack", "other-after-ack", "none")


@scenario("push-durability",
          fault="config pushes with kill -9 at random moments: of the target or of another decider, before "
                "or after the acknowledgement (>= 100 rounds; 15 in --short); killed deciders restarted at once",
          prop="0 acknowledged pushes lost: every acknowledged config is present, at its version and in "
               "acknowledgement order, on every decider at the end (linearizable history)",
          order=200)
def push_durability(ctx):
    rounds = 15 if ctx.short else 100
    c = ctx.cluster(decider_args=("--keep-configs", "1000"))
    rng = ctx.rng
    acked = []      # (version, sha, round, target)
    moments = {m: 0 for m in KILL_MOMENTS}
    kills = 0
    no_ack = 0
    t_start = time.monotonic()
    for r in range(rounds):
        target = rng.choice(c.deciders)
        moment = rng.choice(KILL_MOMENTS)
        victim = (target if moment.startswith("target") else
                  None if moment == "none" else rng.choice([d for d in c.deciders if d != target]))
        moments[moment] += 1
        path, sha = c.write_push_file(c.config_text(marker=r + 2), "r%03d" % r)
        p = subprocess.Popen(c.push_argv(path, target, timeout_s=5), stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        if moment.endswith("before-ack"):
            # A random moment while the push is in flight (gtmeshctl start,
            # TLS handshake, validation, fsync, reply).
            time.sleep(rng.uniform(0.0, 0.4))
            if victim and c.procs[victim].alive():
                c.procs[victim].kill9()
                kills += 1
        try:
            out, err = p.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            p.kill()
            out, err = p.communicate()
        res = PushResult(target, path, sha, p.returncode, out, err)
        if res.acked:
            acked.append((res.version, sha, r, target))
        else:
            no_ack += 1
        if moment.endswith("after-ack"):
            time.sleep(rng.uniform(0.0, 0.05))
            if victim and c.procs[victim].alive():
                c.procs[victim].kill9()
                kills += 1
        util.log("round %d: push to %s, %s (%s): %s" % (r, target, moment, victim, res))
        for d in c.deciders:
            if not c.procs[d].alive():
                c.start_decider(d)
    # Settle: every decider on one version (bounded).
    t_settle = time.monotonic()
    newest = max((v for v, *_ in acked), default=None)
    deadline = util.Deadline(30)
    versions = {}
    while not deadline.expired():
        versions = {d: c.config_version(d) for d in c.deciders}
        vs = {v[0] if v else None for v in versions.values()}
        if len(vs) == 1 and None not in vs and (newest is None or max(vs) >= newest):
            break
        time.sleep(0.5)
    settle = time.monotonic() - t_settle
    ctx.converged("one version everywhere after the last round", None if deadline.expired() else settle, None)
    ctx.note("versions at the end: %s" % {d: v[0] if v else None for d, v in versions.items()})
    histories = {d: c.config_history(d) for d in c.deciders}
    partial = not c.cli.configs_command
    result = history.check([(v, sha) for v, sha, _, _ in acked], histories, partial=partial)
    lost = result["lost"]
    ctx.configs(len(acked), len(lost))
    ctx.note("%d rounds in %.0f s, %d kills (%s), %d pushes not acknowledged" % (
        rounds, time.monotonic() - t_start, kills, ", ".join("%s %d" % kv for kv in moments.items() if kv[1]), no_ack))
    if result["conflicts"]:
        ctx.note("conflicting acknowledgements: " + "; ".join(result["conflicts"][:3]))
    if result["order_violations"]:
        ctx.note("acknowledgement order != version order: " + "; ".join(result["order_violations"][:3]))
    for d, miss in result["missing"].items():
        ctx.note("%s: %s" % (d, "; ".join(miss[:3])))
    if partial:
        ctx.note("history read from gtmeshctl status (newest version only): %d (acknowledged push, decider) "
                 "pairs not verifiable until `gtmeshctl configs` exists" % result["unverifiable"])
        skipped = {}
        for d in c.deciders:
            seen = {v for v, _ in c.activated_versions(d)}
            skipped[d] = sum(1 for v, *_ in acked if v not in seen)
        ctx.note("acknowledged versions a decider never activated (from its log): %s" % skipped)
    for i in lost[:5]:
        v, sha, rnd, target = acked[i]
        ctx.note("lost: round %d, v%d (%s) acknowledged by %s" % (rnd, v, sha[:12], target))
    ctx.check(not lost, "0 acknowledged pushes lost (%d lost of %d acknowledged)" % (len(lost), len(acked)))
    ctx.check(not result["order_violations"], "acknowledgement order is version order")
    ctx.check(not result["unreachable"], "every decider answered at the end (%s)" % result["unreachable"])
