"""A rolling upgrade from the previous release (docs/releases.md)."""
import os

from .. import util
from ..cluster import SRC, www
from ..scenario import scenario
from ..steps import baseline, wait_histories

RELEASE = "0.1.0"


def release_bins(ctx):
    """(gtmesh, gtmeshctl) of RELEASE, built from this repository's history."""
    r = util.run([os.path.join(SRC, "tools", "build_release.sh"), RELEASE], timeout=1800)
    ctx.require(r.returncode == 0, "release %s is built from this repository's history (tools/build_release.sh): %s"
                % (RELEASE, (r.stdout + r.stderr).strip()[-200:]))
    folder = r.stdout.strip().splitlines()[-1]
    return os.path.join(folder, "gtmesh"), os.path.join(folder, "gtmeshctl")


@scenario("rolling-upgrade",
          fault="a TLS cluster of the previous release (0.1.0, built by tools/build_release.sh) with fra drained; "
                "each node upgraded in turn (SIGTERM, the new binary on the same folder): the sin agent, each "
                "follower, the leader, then the fra and iad agents; a config pushed after every step, with the old "
                "gtmeshctl until two of the three deciders are upgraded",
          prop="the decider being upgraded is silent or answers SERVFAIL until it is back; every other answer, on "
               "every responder at every moment, is iad (the drain holds across versions); every push is "
               "acknowledged and in every decider's history, with the history from before; an undrain afterwards "
               "brings fra back",
          order=98)
def rolling_upgrade(ctx):
    old = release_bins(ctx)
    new = ctx.run.bins
    c = ctx.cluster(bins=old)
    q = ctx.query_loop(c)
    baseline(ctx, c, q)
    fra, iad = www("fra"), www("iad")

    def drain():
        out = c.ctl("drain", "fra", retry_for_s=10)
        ctx.check(out.returncode == 0, "fra drained with the old gtmeshctl: %s" % (out.stdout + out.stderr).strip()[-120:])

    ctx.phase(q, "fra drained -> iad", drain, iad, 5.0, before=fra)
    before = c.config_history("decider1") or []
    pushes = []

    def push(after):
        r = c.push(c.config_text(marker=10 + len(pushes)), label="after-" + after, retry_for_s=20)
        ctx.check(r.acked, "a push after %s is acknowledged (%s)" % (after, r))
        pushes.append(r)

    def agent_linked(dc):
        for d in c.deciders:
            st = c.status(d, attempts=1)
            if st and "1 agent(s) connected" in st.dcs.get(dc, ""):
                return True
        return False

    def upgrade_agent(dc):
        p = c.procs["agent-" + dc]
        p.argv[0] = new[0]
        p.stop()
        p.start()
        ok, secs, _ = util.wait_for(lambda: agent_linked(dc), 30, 0.3)
        ctx.check(ok, "the new %s agent links (%s)" % (dc, util.fmt_s(secs)))
        push("the %s agent" % dc)

    def upgrade_decider(d):
        c.procs[d].argv[0] = new[0]
        t = q.mark("upgrading " + d)
        q.exclude(d, t)
        up = c.restart_decider(d, raise_on_failure=False)  # SIGTERM, the new binary, the same folder
        ok, secs, _ = util.wait_for(lambda: c.query(d) == iad, 30, 0.1)
        t_up = q.mark(d + " upgraded")
        q.exclude(d, t, t_up)
        q.expect(t_up, {iad}, [d])
        ctx.check(up and ok, "%s upgraded and answering iad again (%s)" % (d, util.fmt_s(secs)))
        push(d)

    upgrade_agent("sin")  # a new agent reports to old deciders
    leader = c.leader()
    for i, d in enumerate([x for x in c.deciders if x != leader] + [leader]):
        upgrade_decider(d)
        if i == 1:
            c.gtmesh, c.ctl_bin = new  # the operator's gtmeshctl is upgraded half way
    for dc in ("fra", "iad"):
        upgrade_agent(dc)

    # Read as soon as the last push was acknowledged: the followers apply
    # it a heartbeat later (this row once read them 0.1 s after it and
    # failed 2 runs in 3 on another machine).
    acked = [r for r in pushes if r.acked]
    hists = wait_histories(ctx, c, acked, c.bounds.applied_everywhere, why="the bound applied_everywhere")
    for d, h in hists.items():
        key = [(x.version, x.sha) for x in before]
        ctx.check([(x.version, x.sha) for x in h[:len(before)]] == key, "%s kept the history from before" % d)
    ctx.configs(len(acked), len(pushes) - len(acked))

    def undrain():
        out = c.ctl("undrain", "fra", retry_for_s=10)
        ctx.check(out.returncode == 0, "fra undrained after the upgrade: %s" % out.stdout.strip()[-120:])

    ctx.phase(q, "fra undrained -> fra", undrain, fra, 5.0, before=iad)
