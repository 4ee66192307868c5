"""The set of deciders changed online (gtmeshctl member), under load."""
import re
import subprocess
import threading
import time

from .. import util
from ..cluster import ELECTION_TIMEOUT_S, www
from ..dns import Answer
from ..scenario import scenario
from ..steps import baseline, wait_histories


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


# libraft gives up catching a decider up after 5 s without progress (its
# catch-up round); a join that resumes completes within that, or with the
# operator's next `member add` (one more round), plus slack.
CATCH_UP_ROUND_S = 5.0
# Where a joining decider is killed (-9) during its add.
KILL_AFTER_ADD = "0.15 s after member add"           # the recipe: wherever catch-up then is
KILL_AFTER_SNAPSHOT = "once it stored the snapshot"  # its answers to the leader held back: the leader never heard


def voters(c, via):
    r = c.ctl("member", "list", decider=via)
    return sorted(re.findall(r"^(\S+) voter", r.stdout, re.M)) if r.returncode == 0 else None


def in_background(c, *args, via):
    """gtmeshctl ARGS from the client namespace, not waited for."""
    argv = c.topo.exec_argv("client", c.ctl_argv(*args, decider=via, timeout_s=30, retry_for_s=30,
                                                 all_deciders=True))
    return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@scenario("membership",
          fault="fra drained, a log long enough to be compacted (a joining decider is sent a snapshot); deciders "
                "3 -> 4 -> 5 -> 4 -> 3 with gtmeshctl member add/remove while configs are pushed every 0.7 s; each "
                "joining decider killed (-9) during its add and restarted on its folder with the same flags: "
                "decider4 0.15 s after `member add` (issue 42 item 7), decider5 once it stored the leader's "
                "snapshot, its answers to the leader held back 1.5 s by its fault hooks; the leader killed (-9) "
                "during the remove of decider5 and restarted; decider4 killed and removed while it is dead, then "
                "restarted",
          prop="each killed joiner becomes a voter within two catch-up rounds + slack of its restart (the add in "
               "flight, or one more `member add`), answers iad and names the leader every member names; every "
               "change completes (retried where a kill interrupted it); every acknowledged push is in the "
               "history of every member (polled within the reconnect bound); the drain holds on every member "
               "(www answers iad, never anything else on the first three); a removed decider answers SERVFAIL "
               "(the one removed while dead within 2 election timeouts + slack of its restart) and its status "
               "says it was removed; the member list ends as the first three",
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
    # More than a snapshot's worth of entries (32): a joiner gets one.
    refused = [r for r in (c.ctl(op, "sin", retry_for_s=10) for _ in range(20) for op in ("drain", "undrain"))
               if r.returncode != 0]
    ctx.require(not refused, "40 drains and undrains of sin (a log past its first snapshot): %s"
                % ("all done" if not refused else (refused[0].stdout + refused[0].stderr).strip()[-120:]))
    pusher = Pusher(c, 30)
    pusher.start()
    resume_bound = 2 * CATCH_UP_ROUND_S + c.spec.slack_s

    def names_the_leader(d):
        leaders = {st.leader for st in (c.status(x, attempts=1) for x in first) if st and st.leader}
        st = c.status(d, attempts=1)
        return (st.leader, leaders) if st and len(leaders) == 1 and st.leader in leaders else None

    def add(d, kill=None):
        ctx.require(c.join_decider(d), "%s starts with --join" % d)
        addr = c.mesh_addr(d)
        if kill is None:
            r = c.ctl("member", "add", addr, decider=first[0], timeout_s=30, retry_for_s=30, all_deciders=True)
            ctx.check(r.returncode == 0, "member add %s: %s" % (d, (r.stdout + r.stderr).strip()[-160:]))
        else:
            if kill == KILL_AFTER_SNAPSHOT:
                leader = c.leader()
                r = c.fault_hook(c.mesh_addr(leader), "delay=1500ms", d)
                ctx.require(r.returncode == 0, "%s's messages to the leader %s are held 1.5 s: %s"
                            % (d, leader, (r.stdout + r.stderr).strip()[-120:]))
            p = in_background(c, "member", "add", addr, via=first[0])
            if kill == KILL_AFTER_SNAPSHOT:
                ok, secs, _ = util.wait_for(lambda: (lambda st: st and st.applied > 0)(c.status(d, attempts=1)),
                                            15, 0.05)
                ctx.check(ok, "%s stored the leader's snapshot (in %s)" % (d, util.fmt_s(secs)))
            else:
                time.sleep(0.15)  # the recipe: the kill lands mid-catch-up; a moment, not a synchronisation
            c.procs[d].kill9()
            c.start_decider(d)  # the same folder, the same flags
            restarted = time.monotonic()
            out, err = p.communicate(timeout=120)
            if p.returncode != 0:
                ctx.note("member add %s interrupted by its kill -9 (%s): %s" % (d, kill, (out + err).strip()[-160:]))
                r = c.ctl("member", "add", addr, decider=first[0], timeout_s=30, retry_for_s=30, all_deciders=True)
                ctx.check(r.returncode == 0, "member add %s again after the kill: %s"
                          % (d, (r.stdout + r.stderr).strip()[-160:]))
            took = time.monotonic() - restarted
            ctx.check(took <= resume_bound, "%s, killed %s and restarted on its folder, is a voter %.1f s after its "
                      "restart (bound: two catch-up rounds + slack = %.0f s)" % (d, kill, took, resume_bound))
        c.member_added(d)
        ok, secs, _ = util.wait_for(lambda: c.query(d) == iad, 30, 0.1)
        ctx.check(ok, "%s, a voter now, answers iad (the drain kept) in %s" % (d, util.fmt_s(secs)))
        ok, _, named = util.wait_for(lambda: names_the_leader(d), b.new_leader, 0.2)
        ctx.check(ok, "%s's status names the leader every member names: %s" % (d, named or c.status(d, attempts=1)))

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

    add("decider4", kill=KILL_AFTER_ADD)
    add("decider5", kill=KILL_AFTER_SNAPSHOT)
    ok, _, listed = util.wait_for(lambda: (lambda v: v if v and len(v) == 5 else None)(voters(c, first[0])), 10, 0.2)
    ctx.check(ok, "five voters: %s" % listed)
    remove("decider5", kill_leader=True)
    # decider4 removed while it is dead: back, a member tells it.
    c.procs["decider4"].kill9()
    remove("decider4")
    c.start_decider("decider4")
    t = time.monotonic()
    bound = 2 * ELECTION_TIMEOUT_S + c.spec.slack_s
    ok, secs, got = util.wait_for(lambda: c.query("decider4") == Answer("SERVFAIL"), 2 * bound, 0.05)
    ctx.check(ok and secs <= bound, "decider4, removed while it was dead and restarted, answers SERVFAIL %s after "
              "its restart (bound: 2 election timeouts + slack = %.0f s): %s" % (util.fmt_s(secs), bound, got))
    st = c.status("decider4")
    ctx.check(st is not None and "NOT ANSWERING DNS: removed from the cluster" in st.text,
              "and its status says it was removed: %s" % (st.consensus_line() if st else "no status"))
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
    # The leader was restarted: a follower may still be reconnecting.
    wait_histories(ctx, c, acked, b.reconnect, deciders=first, why="the reconnect bound")
    ctx.configs(len(acked), len(pusher.results) - len(acked))

    def undrain():
        out = c.ctl("undrain", "fra", retry_for_s=10)
        ctx.check(out.returncode == 0, "fra undrained: %s" % out.stdout.strip()[-120:])

    ctx.phase(q, "fra undrained -> fra", undrain, fra, 5.0, before=iad)
