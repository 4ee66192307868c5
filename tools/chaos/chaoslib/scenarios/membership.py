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


def voters(c, via):
    r = c.ctl("member", "list", decider=via)
    return sorted(re.findall(r"^(\S+) voter", r.stdout, re.M)) if r.returncode == 0 else None


def in_background(c, *args, via):
    """gtmeshctl ARGS from the client namespace, not waited for."""
    argv = c.topo.exec_argv("client", c.ctl_argv(*args, decider=via, timeout_s=30, retry_for_s=30,
                                                 all_deciders=True))
    return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


# libraft gives up catching a decider up after 5 s without progress (its
# catch-up round); a join that resumes completes within that, or with the
# operator's next `member add` (one more round), plus slack.
CATCH_UP_ROUND_S = 5.0
# Where a joining decider is killed (-9) during its join.
KILL_BEFORE_ADD = "before its add (the add issued while it is dead)"
KILL_AFTER_ADD = "0.15 s after member add"           # the recipe: wherever catch-up then is
KILL_AFTER_SNAPSHOT = "once it stored the snapshot"  # its answers to the leader held back: the leader never heard
KILL_ONCE_VOTER = "right after member add returned"  # a voter at the leader, perhaps not yet in its own log


def compact_log(ctx, c):
    """More than a snapshot's worth of log entries (32): a decider that
    joins now is sent a snapshot."""
    refused = [r for r in (c.ctl(op, "sin", retry_for_s=10) for _ in range(20) for op in ("drain", "undrain"))
               if r.returncode != 0]
    ctx.require(not refused, "40 drains and undrains of sin (a log past its first snapshot): %s"
                % ("all done" if not refused else (refused[0].stdout + refused[0].stderr).strip()[-120:]))


def names_the_leader(c, members, d):
    """(what d names, what the members name) when d names the one leader
    every member names, else None."""
    leaders = {st.leader for st in (c.status(x, attempts=1) for x in members) if st and st.leader}
    st = c.status(d, attempts=1)
    return (st.leader, leaders) if st and len(leaders) == 1 and st.leader in leaders else None


def join(ctx, c, d, via, want, kill=None):
    """Starts spare decider d with --join and adds it through `via`; with
    `kill`, d is killed (-9) at that point of its join and started again on
    its folder with the same flags: the add in flight, or one more, must make
    it a voter within two catch-up rounds + slack of the restart. Then it
    answers `want` and names the leader the members name."""
    members = list(c.deciders)
    ctx.require(c.join_decider(d), "%s starts with --join" % d)
    addr = c.mesh_addr(d)
    resume_bound = 2 * CATCH_UP_ROUND_S + c.spec.slack_s

    def add_now():
        return c.ctl("member", "add", addr, decider=via, timeout_s=30, retry_for_s=30, all_deciders=True)

    if kill is None:
        r = add_now()
        ctx.check(r.returncode == 0, "member add %s: %s" % (d, (r.stdout + r.stderr).strip()[-160:]))
    else:
        if kill == KILL_AFTER_SNAPSHOT:
            leader = c.leader()
            r = c.fault_hook(c.mesh_addr(leader), "delay=1500ms", d)
            ctx.require(r.returncode == 0, "%s's messages to the leader %s are held 1.5 s: %s"
                        % (d, leader, (r.stdout + r.stderr).strip()[-120:]))
        if kill == KILL_BEFORE_ADD:
            c.procs[d].kill9()
        if kill == KILL_ONCE_VOTER:
            r = add_now()
            ctx.check(r.returncode == 0, "member add %s: %s" % (d, (r.stdout + r.stderr).strip()[-160:]))
        p = in_background(c, "member", "add", addr, via=via)  # for KILL_ONCE_VOTER a retry: done already
        if kill == KILL_BEFORE_ADD:
            ok, secs, _ = util.wait_for(lambda: (lambda o: o is not None and re.search(
                r"^%s spare" % re.escape(addr), o, re.M))(c.ctl("member", "list", decider=via).stdout), 10, 0.05)
            ctx.check(ok, "the dead %s is a spare being caught up (in %s)" % (d, util.fmt_s(secs)))
        elif kill == KILL_AFTER_SNAPSHOT:
            ok, secs, _ = util.wait_for(lambda: (lambda st: st and st.applied > 0)(c.status(d, attempts=1)), 15, 0.05)
            ctx.check(ok, "%s stored the leader's snapshot (in %s)" % (d, util.fmt_s(secs)))
        elif kill == KILL_AFTER_ADD:
            time.sleep(0.15)  # the recipe: the kill lands mid-catch-up; a moment, not a synchronisation
        if kill != KILL_BEFORE_ADD:
            c.procs[d].kill9()
        c.start_decider(d)  # the same folder, the same flags
        restarted = time.monotonic()
        out, err = p.communicate(timeout=120)
        if p.returncode != 0:
            ctx.note("member add %s interrupted by its kill -9 (%s): %s" % (d, kill, (out + err).strip()[-160:]))
            r = add_now()
            ctx.check(r.returncode == 0, "member add %s again after the kill: %s"
                      % (d, (r.stdout + r.stderr).strip()[-160:]))
        took = time.monotonic() - restarted
        ctx.check(took <= resume_bound, "%s, killed %s and restarted on its folder, is a voter %.1f s after its "
                  "restart (bound: two catch-up rounds + slack = %.0f s)" % (d, kill, took, resume_bound))
    c.member_added(d)
    ok, secs, _ = util.wait_for(lambda: c.query(d) == want, 30, 0.1)
    ctx.check(ok, "%s, a voter now, answers %s in %s" % (d, want, util.fmt_s(secs)))
    ok, _, named = util.wait_for(lambda: names_the_leader(c, members, d), c.bounds.new_leader, 0.2)
    ctx.check(ok, "%s's status names the leader every member names: %s" % (d, named or c.status(d, attempts=1)))


def removed_while_dead(ctx, c, d, remove):
    """Kills d, removes it with remove(d), starts it again: a member tells it
    when it asks for votes; it answers SERVFAIL within 2 election timeouts +
    slack, its status says it was removed, and started once more it knows
    from its folder (within half an election timeout)."""
    c.procs[d].kill9()
    remove(d)
    c.start_decider(d)
    bound = 2 * ELECTION_TIMEOUT_S + c.spec.slack_s
    # Both at once: a SERVFAIL alone proves nothing here (a responder
    # answers SERVFAIL for the moment between its port file and its first
    # snapshot), and a kill before it heard it was removed leaves its folder
    # without that news, so the next step would wait for the peers again.
    last = {}

    def told_removed():
        st = c.status(d)
        last["status"] = st
        return st is not None and "NOT ANSWERING DNS: removed from the cluster" in st.text and \
            c.query(d) == Answer("SERVFAIL")

    ok, secs, _ = util.wait_for(told_removed, 2 * bound, 0.05)
    st = last.get("status")
    ctx.check(ok and secs <= bound, "%s, removed while it was dead and restarted, says it was removed and answers "
              "SERVFAIL %s after its restart (bound: 2 election timeouts + slack = %.0f s): %s" %
              (d, util.fmt_s(secs), bound, st.consensus_line() if st else "no status"))
    # Started once more it knows from its own folder, before it could have
    # asked anyone (a first vote request goes out an election timeout after
    # the start at the earliest). Until its consensus log is open it answers
    # from its last-known-good state, as any restarted decider does: the
    # first answer is recorded, not judged.
    c.procs[d].kill9()
    c.start_decider(d)
    t0 = time.monotonic()
    first = c.query(d)
    ok, secs, _ = util.wait_for(told_removed, 2 * bound, 0.02)
    secs = time.monotonic() - t0
    ctx.check(ok and secs < ELECTION_TIMEOUT_S / 2, "started once more, %s says it was removed and answers SERVFAIL "
              "%s after its start, well before it could have asked anyone (half an election timeout, %.1f s): it "
              "kept that it was removed" % (d, util.fmt_s(secs), ELECTION_TIMEOUT_S / 2))
    ctx.note("%s's first answer once started again (its consensus log still opening): %s" % (d, first))


@scenario("membership",
          fault="fra drained, a log past its first snapshot; deciders 3 -> 4 -> 5 -> 3 with gtmeshctl member "
                "add/remove while configs are pushed every 0.7 s; the joining decider5 is killed (-9) 0.15 s after "
                "`member add` (issue 41 item 7) and restarted on its folder with the same flags; the leader is "
                "killed (-9) during the remove of decider5 and restarted",
          prop="every change completes (retried where the kill interrupted it): decider5 is a voter within two "
               "catch-up rounds + slack of its restart and names the leader every member names; every "
               "acknowledged push is in the history of every member (polled within the reconnect bound); the "
               "drain holds on every member (www answers iad, never anything else on the first three); each "
               "joined decider answers iad once a voter and SERVFAIL once removed; the member list ends as the "
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
    compact_log(ctx, c)
    pusher = Pusher(c, 30)
    pusher.start()

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

    join(ctx, c, "decider4", first[0], iad)
    join(ctx, c, "decider5", first[0], iad, kill=KILL_AFTER_ADD)
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
    # The leader was restarted: a follower may still be reconnecting.
    wait_histories(ctx, c, acked, b.reconnect, deciders=first, why="the reconnect bound")
    ctx.configs(len(acked), len(pusher.results) - len(acked))

    def undrain():
        out = c.ctl("undrain", "fra", retry_for_s=10)
        ctx.check(out.returncode == 0, "fra undrained: %s" % out.stdout.strip()[-120:])

    ctx.phase(q, "fra undrained -> fra", undrain, fra, 5.0, before=iad)


@scenario("join-resume",
          fault="fra drained, a log past its first snapshot (a joining decider is sent one); three deciders join "
                "and each is killed (-9) at one point of its join, then started again on its folder with the same "
                "flags: decider4 before its `member add`, which is issued while it is dead; decider5 once it "
                "stored the leader's snapshot, its answers to the leader held back 1.5 s by its fault hooks (the "
                "leader never heard); decider6 right after `member add` returned; then decider6 killed, removed "
                "while it is dead and started again, twice",
          prop="each joiner is a voter within two catch-up rounds + slack of its restart (the add in flight, or "
               "one more `member add`; it used to stay a spare with 'did not catch up'), answers iad (the drain "
               "kept) and its status names the leader every member names; the first three answer iad "
               "throughout; decider6, removed while dead, says it was removed and answers SERVFAIL within 2 "
               "election timeouts + slack of its restart, and once started again answers SERVFAIL within half an election timeout "
               "(it kept that in its folder); "
               "the member list ends as the first three, decider4 and decider5",
          order=93)
def join_resume(ctx):
    c = ctx.cluster(spare_deciders=3)
    q = ctx.query_loop(c)
    baseline(ctx, c, q)
    fra, iad = www("fra"), www("iad")

    def drain():
        out = c.ctl("drain", "fra", retry_for_s=10)
        ctx.check(out.returncode == 0, "fra drained: %s" % (out.stdout + out.stderr).strip()[-120:])

    ctx.phase(q, "fra drained -> iad", drain, iad, 5.0, before=fra)
    first = list(c.deciders)
    compact_log(ctx, c)
    join(ctx, c, "decider4", first[0], iad, kill=KILL_BEFORE_ADD)
    join(ctx, c, "decider5", first[0], iad, kill=KILL_AFTER_SNAPSHOT)
    join(ctx, c, "decider6", first[0], iad, kill=KILL_ONCE_VOTER)

    def remove(d):
        r = c.ctl("member", "remove", c.mesh_addr(d), decider=first[0], timeout_s=30, retry_for_s=30,
                  all_deciders=True)
        ctx.check(r.returncode == 0, "member remove %s while it is dead: %s" % (d, (r.stdout + r.stderr).strip()[-160:]))
        c.member_removed(d)

    removed_while_dead(ctx, c, "decider6", remove)
    want = sorted(c.mesh_addr(d) for d in first + ["decider4", "decider5"])
    ok, _, listed = util.wait_for(lambda: (lambda v: v if v == want else None)(voters(c, first[0])), 10, 0.2)
    ctx.check(ok, "the member list ends as the first three, decider4 and decider5: %s" % listed)
    ctx.check(all(c.query(d) == iad for d in ("decider4", "decider5")), "decider4 and decider5 still answer iad")
    c.procs["decider6"].stop()
