"""The set of deciders changed online (gtmeshctl member), under load."""
import re
import subprocess
import threading
import time

from .. import util
from ..cluster import www
from ..dns import Answer
from ..scenario import scenario
from ..steps import baseline


class Pusher(threading.Thread):
    """A config push every 0.7 s through every member (gtmeshctl retries for
    20 s); records each outcome. Bounded: 200 pushes."""

    def __init__(self, c, first_marker):
        super().__init__(daemon=True)
        self.c, self.marker = c, first_marker
        self.stop = threading.Event()
        self.results = []

    def run(self):
        while not self.stop.is_set() and len(self.results) < 200:
            self.marker += 1
            self.results.append(self.c.push(self.c.config_text(marker=self.marker), label="m%d" % self.marker,
                                            retry_for_s=20))
            self.stop.wait(0.7)


def voters(c, via):
    r = c.ctl("member", "list", decider=via)
    return sorted(re.findall(r"^(\S+) voter", r.stdout, re.M)) if r.returncode == 0 else None


def in_background(c, *args, via):
    """gtmeshctl ARGS from the client namespace, not waited for."""
    argv = c.topo.exec_argv("client", c.ctl_argv(*args, decider=via, timeout_s=30, retry_for_s=30,
                                                 all_deciders=True))
    return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@scenario("membership",
          fault="fra drained; deciders 3 -> 4 -> 5 -> 3 with gtmeshctl member add/remove while configs are pushed "
                "every 0.7 s; the joining decider5 is killed (-9) during its add and restarted; the leader is killed "
                "(-9) during a remove and restarted",
          prop="every change completes (retried where the kill interrupted it); every acknowledged push is in the "
               "history of every member; the drain holds on every member (www answers iad, never anything else "
               "on the first three); each joined decider answers iad once a voter; the member list ends as the "
               "first three",
          order=92)
def membership(ctx):
    c = ctx.cluster(spare_deciders=2)
    b = c.bounds
    q = ctx.query_loop(c)
    baseline(ctx, c, q)
    fra, iad = www("fra"), www("iad")

    def drain():
        out = c.ctl("drain", "fra", retry_for_s=10)
        ctx.check(out.returncode == 0, "fra drained: %s" % (out.stdout + out.stderr).strip()[-120:])

    ctx.phase(q, "fra drained -> iad", drain, iad, 5.0, before=fra)
    first = list(c.deciders)
    pusher = Pusher(c, 30)
    pusher.start()

    def add(d, kill_joiner=False):
        ctx.require(c.join_decider(d), "%s starts with --join" % d)
        addr = c.mesh_addr(d)
        if not kill_joiner:
            r = c.ctl("member", "add", addr, decider=first[0], timeout_s=30, retry_for_s=30, all_deciders=True)
            ctx.check(r.returncode == 0, "member add %s: %s" % (d, (r.stdout + r.stderr).strip()[-160:]))
        else:
            p = in_background(c, "member", "add", addr, via=first[0])
            time.sleep(0.3)  # the fault lands mid-change: a moment, not a synchronisation
            c.procs[d].kill9()
            c.start_decider(d)
            out, err = p.communicate(timeout=120)
            if p.returncode != 0:
                ctx.note("member add %s interrupted by its kill -9: %s" % (d, (out + err).strip()[-160:]))
                r = c.ctl("member", "add", addr, decider=first[0], timeout_s=30, retry_for_s=30, all_deciders=True)
                ctx.check(r.returncode == 0, "member add %s again after the kill: %s"
                          % (d, (r.stdout + r.stderr).strip()[-160:]))
        c.member_added(d)
        ok, secs, _ = util.wait_for(lambda: c.query(d) == iad, 30, 0.1)
        ctx.check(ok, "%s, a voter now, answers iad (the drain kept) in %s" % (d, util.fmt_s(secs)))

    def remove(d, kill_leader=False):
        addr = c.mesh_addr(d)
        survivors = [x for x in c.deciders if x != d]
        if not kill_leader:
            r = c.ctl("member", "remove", addr, decider=survivors[0], timeout_s=30, retry_for_s=30, all_deciders=True)
            ctx.check(r.returncode == 0, "member remove %s: %s" % (d, (r.stdout + r.stderr).strip()[-160:]))
        else:
            leader = c.leader()
            p = in_background(c, "member", "remove", addr, via=survivors[0])
            time.sleep(0.2)  # the fault lands mid-change
            t = q.mark("leader %s killed during member remove %s" % (leader, d))
            if leader in q.responders:
                q.exclude(leader, t)
            c.procs[leader].kill9()
            c.start_decider(leader)
            if leader in q.responders:
                ok, _, _ = util.wait_for(lambda: c.query(leader) == iad, 30, 0.1)
                q.exclude(leader, t, q.mark("%s back" % leader))
                ctx.check(ok, "the restarted leader %s answers iad" % leader)
            out, err = p.communicate(timeout=120)
            if p.returncode != 0:
                ctx.note("member remove %s interrupted by the leader's kill -9: %s" % (d, (out + err).strip()[-160:]))
                r = c.ctl("member", "remove", addr, decider=survivors[0], timeout_s=30, retry_for_s=30,
                          all_deciders=True)
                ctx.check(r.returncode == 0, "member remove %s again after the kill: %s"
                          % (d, (r.stdout + r.stderr).strip()[-160:]))
        c.member_removed(d)
        listed = voters(c, survivors[0]) or []
        ctx.check(c.mesh_addr(d) not in listed, "%s is no longer a voter: %s" % (d, listed))

    add("decider4")
    add("decider5", kill_joiner=True)
    ok, _, listed = util.wait_for(lambda: (lambda v: v if v and len(v) == 5 else None)(voters(c, first[0])), 10, 0.2)
    ctx.check(ok, "five voters: %s" % listed)
    remove("decider5", kill_leader=True)
    remove("decider4")
    util.wait_for(lambda: len(pusher.results) >= 8, 30, 0.2)  # some pushes on every shape of the cluster
    pusher.stop.set()
    pusher.join(120)
    ok, _, listed = util.wait_for(lambda: (lambda v: v if v == sorted(c.mesh_addr(d) for d in first) else None)(
        voters(c, first[0])), 20, 0.2)
    ctx.check(ok, "the member list ends as the first three: %s" % listed)
    for d in ("decider4", "decider5"):
        got = c.query(d)
        ctx.check(got == Answer("SERVFAIL"), "removed %s answers no query as a member: %s" % (d, got))
        c.procs[d].stop()

    acked = [r for r in pusher.results if r.acked]
    ctx.check(len(acked) >= 8 and len(acked) == len(pusher.results),
              "every push was acknowledged: %d of %d (%s)" % (len(acked), len(pusher.results),
                                                              [str(r) for r in pusher.results if not r.acked][:3]))
    for d in first:
        ok, _, h = util.wait_for(lambda: (lambda hist: hist if hist and all(r.sha in {x.sha for x in hist}
                                                                          for r in acked) else None)(
            c.config_history(d)), b.reconnect, 0.3)
        ctx.check(ok, "%s's history holds all %d acknowledged pushes" % (d, len(acked)))
    ctx.configs(len(acked), len(pusher.results) - len(acked))

    def undrain():
        out = c.ctl("undrain", "fra", retry_for_s=10)
        ctx.check(out.returncode == 0, "fra undrained: %s" % out.stdout.strip()[-120:])

    ctx.phase(q, "fra undrained -> fra", undrain, fra, 5.0, before=iad)
