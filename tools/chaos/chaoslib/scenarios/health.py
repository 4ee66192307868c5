"""Backends failing their health probes: one DC, every DC."""
import os
import re
import threading
import time

from .. import util
from ..cluster import API, API_ANSWERS, FAIL_SAFE, WWW, www
from ..dns import A, Resolver, dig, dnsperf
from ..scenario import scenario
from ..steps import baseline


@scenario("dc-failover",
          fault="one fra backend fails its probe, then every fra backend (down-file); later healthy again",
          prop="every responder answers the DC with the most healthy backends (iad) within the failover "
               "bound derived from probe interval x threshold, and fra again within the recovery bound",
          ctest=True, order=10)
def dc_failover(ctx):
    c = ctx.cluster()
    b = c.bounds
    q = ctx.query_loop(c)
    baseline(ctx, c, q)
    fra, iad = www("fra"), www("iad")
    ctx.phase(q, "one fra backend down -> iad", lambda: c.backend_down("fra", 0), iad, b.failover, before=fra)
    ctx.phase(q, "fra backend back -> fra", lambda: c.backend_up("fra", 0), fra, b.recover, before=iad)
    ctx.phase(q, "every fra backend down -> iad", lambda: c.dc_down("fra"), iad, b.failover, before=fra)
    # The priority profile follows too, checked with the real dig.
    got = {d: dig(c.topo, c.dns_server(d), API) for d in c.deciders}
    ctx.check(all(a == A(API_ANSWERS["iad"]) for a in got.values()),
              "dig: the priority profile answers its secondary everywhere: %s" % got)
    ctx.phase(q, "fra healthy again -> fra", lambda: c.dc_up("fra"), fra, b.recover, before=iad)
    ctx.note("bounds: " + b.text)


@scenario("probe-acl",
          fault="nftables drops every probe to the backends of fra and iad at once (a firewall change in front "
                "of two of three DCs; the backends keep serving); healed; then the same in front of fra alone",
          prop="with protect: {hold: 20s} on www, every responder keeps answering fra while the hold lasts and "
               "every decider's status says PROTECTED; once the hold ends the flips are taken as real (sin, "
               "within hold + failover bound); fra again after the heal; fra's probes blocked alone is a real "
               "failure: iad within the failover bound and nothing PROTECTED",
          ctest=True, order=12)
def probe_acl(ctx):
    c = ctx.cluster()
    b = c.bounds
    hold = 20
    r = c.push(c.config_text(marker=2, www_extra=("protect: {hold: %ds}" % hold,)), label="protect")
    ctx.require(r.acked, "the config with protect: on www is acknowledged (%s)" % r)
    ok, _, _ = util.wait_for(lambda: all((c.config_version(d) or (0, ""))[0] == 2 for d in c.deciders), 15, 0.3)
    ctx.require(ok, "every decider serves config version 2")
    q = ctx.query_loop(c)
    baseline(ctx, c, q)
    fra, iad, sin = www("fra"), www("iad"), www("sin")
    ports = [c.spec.backend_port + i for i in range(c.spec.backends_per_dc)]

    def protected(d):
        return "PROTECTED www.chaos.example. A" in c.status_text(d)

    # Two of three DCs flip at once: held at fra for the hold, then sin.
    # Their agents see the blocked probes up to a probe interval apart, and
    # one DC's flip acts at once (docs/routing.md), so if fra flips first its
    # answers may go to iad until iad flips too and the hold starts (within
    # the failover bound); from then on only fra.
    t = q.mark("probes of fra and iad blocked: held at fra")
    acl = ctx.firewall.probe_acl(["fra", "iad"], ports)
    q.expect(t, {fra, iad})
    q.expect(t + b.failover, fra)
    q.expect(t + hold, {fra, sin})
    q.expect(t + hold + b.failover, sin)
    ok, secs, _ = util.wait_for(lambda: all(protected(d) for d in c.deciders), b.failover, 0.3)
    ctx.check(ok, "every decider reports PROTECTED www within the failover bound (%s)" % util.fmt_s(secs))
    text = c.status_text(c.deciders[0])
    ctx.note("status during the hold: " + next((l.strip() for l in text.splitlines() if "PROTECTED" in l), "none"))
    secs = q.wait_converged(t, sin, hold + 2 * b.failover)
    ctx.converged("hold over -> sin", secs, hold + b.failover)
    ctx.check(secs is not None and secs >= hold, "the answers stayed fra for the whole hold (%s >= %d s)" %
              (util.fmt_s(secs), hold))
    ctx.check(not any(protected(d) for d in c.deciders), "no decider reports PROTECTED after the hold")
    hist = c.ctl("history", "--since", "10m", decider=c.deciders[0])
    lines = [l.strip() for l in hist.stdout.splitlines() if "protection www.chaos.example. A" in l]
    ctx.check(any("holding" in l for l in lines) and len(lines) >= 2,
              "the health timeline has the hold and its end: %s" % (lines or hist.stdout[-300:]))
    # Healed: each DC's agents see their probes pass again up to a probe
    # interval apart, so iad may be back before fra: as many healthy backends
    # as sin and listed before it, it is answered until fra is back too
    # (within the recovery bound).
    ctx.phase(q, "probes allowed again -> fra", acl.heal, fra, b.recover, before={sin, iad})
    # One DC alone: a real failure, no hold.
    t = q.mark("probes of fra alone blocked -> iad")
    acl = ctx.firewall.probe_acl(["fra"], ports)
    q.expect(t, {fra, iad})
    q.expect(t + b.failover, iad)
    secs = q.wait_converged(t, iad, 2 * b.failover)
    ctx.converged("probes of fra alone blocked -> iad", secs, b.failover)
    ctx.check(not any(protected(d) for d in c.deciders), "one DC's flip is not held: no decider reports PROTECTED")
    ctx.phase(q, "probes of fra allowed again -> fra", acl.heal, fra, b.recover, before=iad)
    ctx.note("bounds: " + b.text)


def budget_seconds(text, record):
    """The worst case `gtmesh check-config --budget` printed for `record`
    ("  www.chaos.example. A  12 s = ..." or "... 5m 31s = ...")."""
    for line in text.splitlines():
        m = re.match(r"\s+%s\s+((?:\d+m\s*)?(?:\d+(?:\.\d+)?\s*s)?)\s+=" % re.escape(record), line)
        if m:
            mins = re.search(r"(\d+)m", m.group(1))
            secs = re.search(r"(\d+(?:\.\d+)?)\s*s", m.group(1))
            return (int(mins.group(1)) * 60 if mins else 0) + (float(secs.group(1)) if secs else 0)
    return None


@scenario("budget",
          fault="every fra backend fails its probe (healed); then fra's agent is killed -9, so the DC stops "
                "reporting (restarted)",
          prop="each failover, measured on every responder plus the record's TTL (the last resolver's cache), "
               "stays within the worst case `gtmesh check-config --budget` prints for www",
          order=14)
def budget(ctx):
    c = ctx.cluster()
    b = c.bounds
    path = os.path.join(ctx.dir, "budget.yaml")
    with open(path, "w") as f:
        f.write(c.config_text())
    r = util.run([c.gtmesh, "check-config", "--budget", path], timeout=30)
    ctx.require(r.returncode == 0, "check-config --budget runs (rc %d: %s)" % (r.returncode, r.stderr.strip()[-200:]))
    worst = budget_seconds(r.stdout, "www.chaos.example. A")
    ctx.require(worst is not None, "check-config --budget prints www's worst case:\n" + r.stdout[-600:])
    line = next(l.strip() for l in r.stdout.splitlines() if "www.chaos.example. A" in l)
    ctx.note("budget: " + line)
    ttl = 5  # www's TTL in the generated config
    q = ctx.query_loop(c)
    baseline(ctx, c, q)
    fra, iad = www("fra"), www("iad")
    _, secs = ctx.phase(q, "every fra backend down -> iad", lambda: c.dc_down("fra"), iad, b.failover, before=fra)
    ctx.check(secs is not None and secs + ttl <= worst,
              "backend death: %s + ttl %d s within the budget %.0f s" % (util.fmt_s(secs), ttl, worst))
    ctx.phase(q, "fra healthy again -> fra", lambda: c.dc_up("fra"), fra, b.recover, before=iad)
    agent = c.procs["agent-fra"]
    _, secs = ctx.phase(q, "fra's agent killed -> iad", agent.kill9, iad, b.dc_unreachable, before=fra)
    ctx.check(secs is not None and secs + ttl <= worst,
              "a DC that stops reporting: %s + ttl %d s within the budget %.0f s" % (util.fmt_s(secs), ttl, worst))
    ctx.phase(q, "fra's agent restarted -> fra", agent.start, fra, b.reconnect, before=iad)
    ctx.note("bounds: " + b.text)


@scenario("slow-start",
          fault="every fra backend fails its probe; then all are healthy again, with slow_start: 30s on www",
          prop="fra's share of the answers (over 10,000 during the ramp, from every responder) grows with the "
               "ramp: about 25 %, 55 % and 85 % in its thirds (10 % to 100 % linearly; +-12 points), and all "
               "answers are fra once it is over",
          order=16)
def slow_start(ctx):
    c = ctx.cluster()
    b = c.bounds
    ramp = 30
    r = c.push(c.config_text(marker=2, www_extra=("slow_start: %ds" % ramp,)), label="slow-start")
    ctx.require(r.acked, "the config with slow_start on www is acknowledged (%s)" % r)
    ok, _, _ = util.wait_for(lambda: all((c.config_version(d) or (0, ""))[0] == 2 for d in c.deciders), 15, 0.3)
    ctx.require(ok, "every decider serves config version 2")
    q = ctx.query_loop(c, rate=2)
    baseline(ctx, c, q)
    fra, iad = www("fra"), www("iad")
    ctx.phase(q, "every fra backend down -> iad", lambda: c.dc_down("fra"), iad, b.failover, before=fra)
    t = q.mark("fra healthy again: ramped back over %d s" % ramp)
    q.expect(t, {fra, iad})
    q.expect(t + b.recover + ramp + 2, fra)
    c.dc_up("fra")
    # The sampler: every responder, about 140 rounds a second (under the
    # responders' 200/s limit per client /24), bounded in time and count.
    resolver = Resolver(c.topo)
    servers = [c.dns_server(d) for d in c.deciders]
    start, samples = None, []
    deadline = time.monotonic() + b.recover + ramp + 10
    try:
        while time.monotonic() < deadline and len(samples) < 40000:
            began = time.monotonic()
            got = resolver.query_many(servers, WWW)
            now = time.monotonic()
            for a in got.values():
                if a == fra and start is None:
                    start = now
                if start is not None and a in (fra, iad):
                    samples.append((now - start, a == fra))
            if start is not None and now - start > ramp + 3:
                break
            time.sleep(max(0.0, 1 / 140 - (time.monotonic() - began)))
    finally:
        resolver.close()
    ctx.require(start is not None, "fra answered again within %.0f s" % (b.recover + ramp + 10))

    def share(lo, hi):
        xs = [f for at, f in samples if lo <= at < hi]
        return (sum(xs) / len(xs) if xs else None), len(xs)

    during = [x for x in samples if x[0] < ramp]
    ctx.check(len(during) >= 10000, "%d answers during the %d s ramp (at least 10,000)" % (len(during), ramp))
    thirds = [share(k * ramp / 3, (k + 1) * ramp / 3) for k in range(3)]
    expected = [0.1 + 0.9 * (k + 0.5) / 3 for k in range(3)]
    for k, ((got, n), want) in enumerate(zip(thirds, expected)):
        ctx.check(got is not None and abs(got - want) <= 0.12,
                  "third %d of the ramp: fra %s of %d answers (expected about %.0f %%)" %
                  (k + 1, "-" if got is None else "%.1f %%" % (100 * got), n, 100 * want))
    ctx.check(all(thirds[k][0] is not None and thirds[k][0] < thirds[k + 1][0] for k in range(2)),
              "fra's share grows from third to third")
    after, n = share(ramp + 1, ramp + 3)
    ctx.check(after == 1.0, "after the ramp every answer is fra (%s of %d)" %
              ("-" if after is None else "%.1f %%" % (100 * after), n))
    ctx.note("fra's share by third of the ramp: " + ", ".join(
        "%.1f %%" % (100 * x) if x is not None else "-" for x, _ in thirds))
    ctx.note("bounds: " + b.text)


COOL = "cool.chaos.example"
COOL_ANSWERS = {"fra": "192.0.2.40", "iad": "198.51.100.40", "sin": "203.0.113.40"}


def cool_record(damping=""):
    """A DC-mode record on host CPU, lowest first, optionally damped."""
    return ("- {name: cool, type: A, ttl: 1, dc: {source: host, metric: cpu, criterion: lowest, "
            "gate: {source: host, metric: status, criterion: {equals: up}}, answers: {%s}%s}}" %
            (", ".join("%s: [%s]" % kv for kv in sorted(COOL_ANSWERS.items())), damping))


def flips(records, label, t0, t1):
    """How often `label`'s answer changed between t0 and t1 (lost queries
    skipped), and the answers in the order seen."""
    seen = [a for t, lab, a in records if lab == label and t0 <= t < t1 and a.key[0] == "NOERROR"]
    changes = sum(1 for x, y in zip(seen, seen[1:]) if x != y)
    return changes, seen


@scenario("no-flap",
          fault="fra's and iad's CPU alternate between 40 % and 41 % every 6 s (the agents read a procfs the "
                "harness writes, --procfs); sin runs at 90 %; first without damping, then with switch_margin: "
                "5%; then fra really gets busy (60 %)",
          prop="without a margin the lowest-CPU record flips between fra and iad (at least 3 times per responder "
               "in 4 alternations: the control); with switch_margin: 5% no responder flips at all in 4 "
               "alternations; a real change (fra at 60 %) still moves every responder to iad within two host "
               "intervals + slack",
          order=17)
def no_flap(ctx):
    c = ctx.cluster(fake_procfs=True)
    b = c.bounds
    cpu = c.procfs
    period = 6.0
    alternations = 4
    host_s = 2.0  # the spec's host_interval
    move_bound = 2 * host_s + c.spec.slack_s
    fra, iad = A(COOL_ANSWERS["fra"]), A(COOL_ANSWERS["iad"])

    def serve(marker, damping):
        r = c.push(c.config_text(marker=marker, extra_records=(cool_record(damping),)), label="cool v%d" % marker)
        ctx.require(r.acked, "the config with cool%s is acknowledged (%s)" % (damping, r))
        ok, _, _ = util.wait_for(lambda: all((c.config_version(d) or (0, ""))[0] == marker for d in c.deciders),
                                 15, 0.3)
        ctx.require(ok, "every decider serves config version %d" % marker)

    def alternate(q, label):
        """fra and iad swap 40/41 % every `period` seconds; returns (t0, t1)."""
        t0 = q.mark(label)
        for k in range(alternations):
            if k % 2 == 0:
                cpu.set_cpu(fra=41, iad=40)
            else:
                cpu.set_cpu(fra=40, iad=41)
            time.sleep(period)
        return t0, time.monotonic()

    cpu.set_cpu(fra=30, iad=41, sin=90)
    serve(2, "")
    q = ctx.query_loop(c, name=COOL)
    t = q.mark("fra clearly coolest")
    # The CPU values set just before the push reach the deciders with each
    # agent's next report (one host interval): until then cool is ranked on
    # the values from before (sin was seen answering at +0.1 s in one run).
    q.expect(t, None, why="the agents' next reports carry the CPU values set just before the push")
    secs = q.wait_converged(t, fra, 2 * move_bound)
    ctx.require(secs is not None, "every responder answers fra, the coolest, for cool")
    q.expect(t + secs, {fra, iad})
    # The control: no damping, so each swap moves the answer.
    t0, t1 = alternate(q, "no damping: fra and iad alternate 41/40 %")
    recs = q.snapshot()
    control = {}
    for label in q.responders:
        control[label], _ = flips(recs, label, t0, t1 + host_s)
    ctx.check(all(n >= alternations - 1 for n in control.values()),
              "the control: without damping every responder flips at least %d times in %d alternations: %s" %
              (alternations - 1, alternations, control))
    # The same with switch_margin: 5%.
    cpu.set_cpu(fra=30, iad=41)
    serve(3, ", switch_margin: 5%")
    t = q.mark("switch_margin 5%: fra clearly coolest")
    q.expect(t, {fra, iad})
    secs = q.wait_converged(t, fra, 2 * move_bound)
    ctx.require(secs is not None, "every responder answers fra again under the damped config")
    time.sleep(host_s)  # one more report at 30 % before the alternation
    t = q.mark("damped: fra held while fra and iad alternate 41/40 %")
    q.expect(t, fra)
    t0, t1 = alternate(q, "switch_margin 5%: fra and iad alternate 41/40 %")
    recs = q.snapshot()
    counts = {}
    answered = {}
    for label in q.responders:
        counts[label], seen = flips(recs, label, t0, t1)
        answered[label] = len(seen)
    ctx.check(all(n == 0 for n in counts.values()) and all(n >= 10 for n in answered.values()),
              "with switch_margin 5%% no responder flips in %d alternations: %s (answers %s)" %
              (alternations, counts, answered))
    # Damping never holds a real change: fra at 60 % moves the answer.
    ctx.phase(q, "fra busy (60 %) -> iad", lambda: cpu.set_cpu(fra=60, iad=40), iad, move_bound, before=fra)
    ctx.note("flips without damping: %s; with switch_margin 5%%: %s" % (control, counts))
    ctx.note("bounds: " + b.text)


@scenario("all-dcs-down",
          fault="every backend of every DC fails its probe; later all healthy again; then every agent is "
                "killed (-9: every DC unreachable while the deciders keep their majority) and restarted",
          prop="fail-safe answers (%s) on every responder within the failover bound (and, for the killed "
               "agents, within the unreachable bound); live answers again after recovery" % FAIL_SAFE,
          order=20)
def all_dcs_down(ctx):
    c = ctx.cluster()
    b = c.bounds
    q = ctx.query_loop(c)
    baseline(ctx, c, q)
    fra, iad, sin, safe = www("fra"), www("iad"), www("sin"), www(None)

    def all_down():
        for dc in c.spec.dcs:
            c.dc_down(dc)

    def all_up():
        for dc in c.spec.dcs:
            c.dc_up(dc)

    # While the verdicts come in one by one, any DC may be picked for a moment.
    ctx.phase(q, "every DC down -> fail_safe", all_down, safe, b.failover, before={fra, iad, sin})
    got = {d: dig(c.topo, c.dns_server(d), API) for d in c.deciders}
    ctx.check(all(a == A(FAIL_SAFE) for a in got.values()),
              "dig: the priority profile answers its fail_safe everywhere: %s" % got)
    ctx.phase(q, "every DC healthy -> fra", all_up, fra, b.recover, before={safe, iad, sin})
    agents = [c.procs["agent-" + dc] for dc in c.spec.dcs]

    def kill_agents():
        for a in agents:
            a.kill9()

    def start_agents():
        for a in agents:
            a.start()

    t, _ = ctx.phase(q, "every agent killed -> fail_safe", kill_agents, safe, b.dc_unreachable,
                     before={fra, iad, sin})
    ctx.note("every agent killed -> fail_safe: per responder %s (each decider declares its own agents' DC "
             "unreachable after dc-down-after; the other DCs' data goes stale)" % ", ".join(
                 "%s %s" % (d, util.fmt_s(None if v is None else v - t))
                 for d, v in ((d, q.converged_at(t, safe, [d])) for d in c.deciders)))
    ctx.phase(q, "every agent restarted -> fra", start_agents, fra, b.reconnect, before={safe, iad, sin})


@scenario("failover-under-load",
          fault="every fra backend fails its probe while dnsperf sends 150 queries/s to every responder "
                "(bounded: -l 8 s -Q 150, under the responders' 200/s rate limit per client /24)",
          prop="no query is lost or answered with an error during the failover (dnsperf), and every responder "
               "answers iad within the failover bound (query loop)",
          order=15)
def failover_under_load(ctx):
    c = ctx.cluster()
    b = c.bounds
    q = ctx.query_loop(c, rate=5)
    baseline(ctx, c, q)
    seconds, rate = 8, 150
    stats = {}

    def perf(d):
        stats[d] = dnsperf(c.topo, c.dns_server(d), [WWW, API], seconds=seconds, rate=rate, work_dir=ctx.dir)

    threads = [threading.Thread(target=perf, args=(d,)) for d in c.deciders]
    for t in threads:
        t.start()
    ctx.phase(q, "fra down under load -> iad", lambda: c.dc_down("fra"), www("iad"), b.failover, before=www("fra"))
    for t in threads:
        t.join(timeout=seconds + 40)
    for d in c.deciders:
        st = stats.get(d, {"error": "no result"})
        ctx.note("dnsperf %s: %s" % (d, st if "error" in st else "%d sent, %d completed, %d lost, %s, %.0f q/s, "
                                     "avg %.2f ms" % (st.get("sent", 0), st.get("completed", 0), st.get("lost", 0),
                                                      st.get("rcodes"), st.get("qps", 0),
                                                      1000 * st.get("avg_latency_s", 0))))
        ok = "error" not in st and st.get("sent", 0) > 0 and st.get("lost", 1) == 0 and \
            set(st.get("rcodes", {})) <= {"NOERROR"}
        ctx.check(ok, "dnsperf against %s: nothing lost, only NOERROR" % d)
        ctx.result.sent += st.get("sent", 0)
        ctx.result.answered += st.get("completed", 0)
