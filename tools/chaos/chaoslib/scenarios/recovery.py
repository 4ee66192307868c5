"""Disaster recovery: a cluster rebuilt from `gtmeshctl backup`."""
import os
import shutil

from ..cluster import CFG, marker_address, www
from ..dns import A, Answer
from ..scenario import scenario
from ..steps import baseline


@scenario("restore",
          fault="a config pushed and fra drained; `gtmeshctl backup`; then every decider killed (-9) and its data "
                "folder deleted; each started again with `--restore` of that backup",
          prop="the restored cluster holds the same config history (versions and SHA-256) on every decider, the "
               "drain is kept (www answers iad, the pushed marker is served) once the deciders are current, and "
               "before that they answer nothing else (SERVFAIL) within the bound; an undrain afterwards brings fra "
               "back",
          order=97)
def restore(ctx):
    c = ctx.cluster()
    q = ctx.query_loop(c)
    baseline(ctx, c, q)
    fra, iad = www("fra"), www("iad")
    r = c.push(c.config_text(marker=7), label="before-backup")
    ctx.require(r.acked, "a push before the backup is acknowledged (%s)" % r)

    def drain():
        out = c.ctl("drain", "fra", retry_for_s=10)
        ctx.check(out.returncode == 0, "fra drained: %s" % (out.stdout + out.stderr).strip()[-120:])

    ctx.phase(q, "fra drained -> iad", drain, iad, 5.0, before=fra)
    before = c.config_history("decider1")
    path = os.path.join(c.dir, "cluster.backup")
    out = c.ctl("backup", path, retry_for_s=10)
    ctx.require(out.returncode == 0 and os.path.exists(path), "gtmeshctl backup: %s" % out.stdout.strip()[-160:])
    # Every data folder lost.
    t_lost = q.mark("every decider killed, its data folder deleted")
    for d in c.deciders:
        q.exclude(d, t_lost)
        c.procs[d].kill9()
    for d in c.deciders:
        shutil.rmtree(os.path.join(c.decider_dir(d), "data"), ignore_errors=True)
        pf = os.path.join(c.dir, d + ".ports")
        if os.path.exists(pf):
            os.remove(pf)
        c.procs[d].argv += ["--restore", path]
        c.procs[d].start()  # all before waiting: each needs a majority to become current
    ups = [c.wait_decider(d, 30, raise_on_failure=False) for d in c.deciders]
    ctx.require(all(ups), "every decider starts from the backup")
    t_up = q.mark("restored deciders up")
    q.expect(t_up, {Answer("SERVFAIL"), iad})
    for d in c.deciders:
        q.exclude(d, t_lost, t_up)
        c.procs[d].argv = c.procs[d].argv[:-2]  # later restarts start from their own log
    # Until current a restored decider answers SERVFAIL (resolvers ask
    # another nameserver), never fra, fail_safe or the bootstrap config.
    ctx.phase(q, "restored -> iad (drain kept)", None, iad, 10.0, before=Answer("SERVFAIL"))
    hists = {d: c.config_history(d) for d in c.deciders}
    key = lambda h: [(x.version, x.sha) for x in (h or [])]
    ctx.check(before and all(key(h) == key(before) for h in hists.values()),
              "every restored decider holds the history of the backup: %s" % key(before))
    served = {d: c.query(d, CFG) for d in c.deciders}
    ctx.check(all(a == A(marker_address(7)) for a in served.values()),
              "every restored decider serves the pushed config's marker: %s" % {d: str(a) for d, a in served.items()})

    def undrain():
        out = c.ctl("undrain", "fra", retry_for_s=10)
        ctx.check(out.returncode == 0, "fra undrained after the restore: %s" % out.stdout.strip()[-120:])

    ctx.phase(q, "fra undrained -> fra", undrain, fra, 5.0, before=iad)
