"""The scenario framework.

A scenario is a function registered with @scenario(name, fault, prop). It
gets a Context: `ctx.cluster()` builds a fresh topology and cluster (torn
down afterwards, whatever happens), `ctx.firewall` injects network faults,
`ctx.query_loop()` starts a bounded query loop against every responder,
`ctx.check(ok, text)` records a property check (any failed check fails the
scenario), `ctx.converged(label, seconds, bound)` records a convergence
time against its bound, `ctx.configs(acked, lost)` the push counts,
`ctx.note(text)` anything worth a line in the table.

The result row: scenario, fault, property, PASS/FAIL/ERROR, convergence,
queries sent / answered / wrong, configs acknowledged / lost, notes."""
import dataclasses
import json
import os
import random
import time
import traceback

from . import util
from .cluster import Cluster, ClusterSpec, binaries
from .faults import Firewall
from .janitor import Janitor, new_run_id
from .netns import Topology
from .dns import Answer, QueryLoop

REGISTRY = {}


@dataclasses.dataclass
class Scenario:
    name: str
    fault: str
    prop: str
    fn: object
    short: bool = True      # part of `run-all --short`
    ctest: bool = False     # part of the CTest subset
    order: int = 100


def scenario(name, fault, prop, short=True, ctest=False, order=100):
    def register(fn):
        REGISTRY[name] = Scenario(name, fault, prop, fn, short, ctest, order)
        return fn
    return register


def all_scenarios():
    from . import scenarios  # noqa: F401  (registers them)
    return sorted(REGISTRY.values(), key=lambda s: (s.order, s.name))


@dataclasses.dataclass
class Result:
    name: str
    fault: str
    prop: str
    status: str = "PASS"
    convergence: list = dataclasses.field(default_factory=list)  # (label, seconds or None, bound or None)
    sent: int = 0
    answered: int = 0
    wrong: int = 0
    acked: int = None
    lost: int = None
    notes: list = dataclasses.field(default_factory=list)
    checks: list = dataclasses.field(default_factory=list)  # (ok, text)
    seconds: float = 0.0
    error: str = ""
    command: str = ""       # re-runs this scenario alone (same seed, same mode)

    def convergence_text(self):
        parts = []
        for label, secs, bound in self.convergence:
            s = "never" if secs is None else "%.1f s" % secs
            if bound is not None:
                s += " (bound %.1f s)" % bound
            parts.append("%s: %s" % (label, s) if label else s)
        return "; ".join(parts) or "-"


class Run:
    """One invocation: a run id, a run folder, the janitor, the CA."""

    def __init__(self, short=False, keep=False, base_dir=None, seed=None):
        self.run_id = new_run_id()
        base = base_dir or os.environ.get("GTMESH_CHAOS_DIR", "/tmp")
        self.dir = os.path.join(base, self.run_id)
        os.makedirs(self.dir, exist_ok=True)
        util.set_log_file(os.path.join(self.dir, "chaos.log"))
        self.janitor = Janitor(self.run_id, self.dir)
        self.short = short
        self.keep = keep
        self.seed = seed if seed is not None else random.randrange(1 << 30)
        self.bins = binaries()
        self.tls_dir = os.path.join(self.dir, "tls")
        for b in self.bins:
            if not os.access(b, os.X_OK):
                raise SystemExit("not an executable: %s (set GTMESH_BIN / GTMESHCTL_BIN)" % b)
        util.log("run %s in %s (seed %d, gtmesh %s)" % (self.run_id, self.dir, self.seed, self.bins[0]))

    def ensure_ca(self, spec):
        Cluster.make_ca(self.tls_dir, self.bins[1],
                        ["decider%d" % (i + 1) for i in range(spec.deciders + spec.spare_deciders)], spec.dcs)

    def close(self):
        self.janitor.cleanup()


def _short(text, limit=160):
    return text if len(text) <= limit else text[:limit] + "..."


def _answers(x):
    if x is None:
        return set()
    if isinstance(x, Answer):
        return {x}
    return set(x)


class ScenarioFailed(Exception):
    pass


class Context:
    def __init__(self, run, sc):
        self.run = run
        self.sc = sc
        self.short = run.short
        self.rng = random.Random("%d/%s" % (run.seed, sc.name))
        self.dir = os.path.join(run.dir, sc.name)
        os.makedirs(self.dir, exist_ok=True)
        self.result = Result(sc.name, sc.fault, sc.prop)
        self.topo = None
        self.firewall = None
        self.clusters = []
        self.n_clusters = 0
        self.loops = []
        self._undo = []

    # -- building blocks -----------------------------------------------------
    def cluster(self, bins=None, **overrides):
        """A fresh topology + cluster, started and answering; `bins`
        (gtmesh, gtmeshctl) instead of the run's (an older release)."""
        spec = ClusterSpec(**overrides)
        self.run.ensure_ca(spec)
        self.topo = Topology(self.run.janitor, Cluster.hosts(spec), syn_retries=spec.syn_retries)
        self.topo.create()
        self._undo.append(self.topo.close)
        self.firewall = Firewall(self.topo)
        # A fresh folder per cluster: a second cluster must not find the
        # first one's data (its Raft membership names other addresses).
        self.n_clusters += 1
        folder = "cluster" if self.n_clusters == 1 else "cluster%d" % self.n_clusters
        c = Cluster(self.run.janitor, self.topo, os.path.join(self.dir, folder), self.run.tls_dir, spec,
                    bins or self.run.bins)
        self.clusters.append(c)
        self._undo.append(c.stop)
        c.start()
        return c

    def query_loop(self, cluster, name=None, rate=10.0, max_seconds=None, responders=None):
        from .cluster import WWW
        resp = cluster.responders if responders is None else {d: cluster.dns_server(d) for d in responders}
        loop = QueryLoop(cluster.resolver, resp, name or WWW, rate=rate,
                         max_seconds=max_seconds or (90 if self.short else 300))
        loop.on_mark.append(cluster.mark)
        loop.start()
        self.loops.append(loop)
        self._undo.append(loop.stop)
        return loop

    def phase(self, q, label, action, after, bound, before=None, responders=None, wait=None, hold=3):
        """One step of a scenario: mark the time, act (inject a fault, heal),
        allow `before` or `after` answers (before="any": anything) until the bound, only `after`
        from then on; wait (up to `wait`, default twice the bound, so that a
        miss is still measured) for every listed responder to converge and
        record the time. Returns (t, seconds or None)."""
        t = q.mark(label)
        if action:
            action()
        if before == "any":
            q.expect(t, None, responders, why=label + ": any answer until the bound")
        else:
            q.expect(t, _answers(before) | _answers(after), responders)
        q.expect(t + bound, _answers(after), responders)
        secs = q.wait_converged(t, _answers(after), wait if wait is not None else 2 * bound, responders, hold)
        if secs is not None and bound and secs > 0.7 * bound:
            # Close to the bound: which responder was slow?
            labels = list(q.responders) if responders is None else list(responders)
            per = {d: q.converged_at(t, _answers(after), [d], hold) for d in labels}
            self.note("%s: per responder %s" % (label, ", ".join("%s %s" % (d, "-" if v is None else "%.1f s" % (v - t))
                                                                  for d, v in per.items())))
        if not self.converged(label, secs, bound):
            labels = list(q.responders) if responders is None else list(responders)
            self.note("%s, answers since: %s" % (label, "; ".join("%s %s" % (d, _short(q.summary(d, t)))
                                                                  for d in labels)))
        return t, secs

    def also_within(self, q, t, label, after, bound, responders, hold=3):
        """After a phase: did these responders (a subset) converge within a
        tighter bound of their own? Recorded as a step of its own."""
        ts = [q.converged_at(t, _answers(after), [d], hold) for d in responders]
        secs = None if any(x is None for x in ts) else max(ts) - t
        return self.converged(label, secs, bound)

    # -- recording -----------------------------------------------------------
    def check(self, ok, what):
        util.log(("ok   " if ok else "FAIL ") + what)
        self.result.checks.append((bool(ok), what))
        return bool(ok)

    def require(self, ok, what):
        """A check whose failure ends the scenario (later steps make no sense)."""
        if not self.check(ok, what):
            raise ScenarioFailed(what)

    def note(self, text):
        util.log("note: " + text)
        self.result.notes.append(text)

    def converged(self, label, seconds, bound):
        """Records a convergence time; a check that it is within the bound."""
        self.result.convergence.append((label, seconds, bound))
        if bound is None:
            return self.check(seconds is not None, "%s converged (%s)" % (label, util.fmt_s(seconds)))
        return self.check(seconds is not None and seconds <= bound,
                          "%s converged in %s (bound %.1f s)" % (label, util.fmt_s(seconds), bound))

    def configs(self, acked, lost):
        self.result.acked = acked
        self.result.lost = lost

    def teardown(self):
        """Stops the cluster(s) and removes the topology now (a scenario
        that builds a second cluster calls it in between); the query
        loops' records stay for the result row."""
        self._teardown()
        self.clusters = []

    def _teardown(self):
        for fn in reversed(self._undo):
            try:
                fn()
            except Exception as e:
                util.log("teardown: %s" % e)
        self._undo = []


def run_one(run, sc):
    ctx = Context(run, sc)
    ctx.result.command = "tools/chaos/run %s--seed %d %s" % ("--short " if run.short else "", run.seed, sc.name)
    util.log("=== %s: %s -> %s" % (sc.name, sc.fault, sc.prop))
    t0 = time.monotonic()
    res = ctx.result
    try:
        sc.fn(ctx)
    except ScenarioFailed as e:
        res.error = str(e)
    except Exception as e:
        res.status = "ERROR"
        res.error = "%s: %s" % (type(e).__name__, e)
        util.log(traceback.format_exc())
    finally:
        for loop in ctx.loops:
            loop.stop()
            s = loop.score()
            res.sent += s["sent"]
            res.answered += s["answered"]
            res.wrong += s["wrong"]
            for ex in s["wrong_examples"][:3]:
                util.log("wrong answer: " + ex)
            # Every answer is judged: one outside what its phase allows
            # fails the scenario, whatever the scenario's own checks said.
            ctx.check(s["wrong"] == 0, "no wrong answer outside the declared windows (%d wrong%s)"
                      % (s["wrong"], (": " + "; ".join(s["wrong_examples"][:3])) if s["wrong"] else ""))
            windows = loop.unjudged()
            if windows:
                ctx.note("answers not judged: " + "; ".join("%s for %.1f s (%s)" % w for w in windows))
        if res.status != "ERROR" and any(not ok for ok, _ in res.checks):
            res.status = "FAIL"
        if res.status != "PASS":
            for c in ctx.clusters:
                util.log("logs of %s:\n%s" % (sc.name, c.logs_tail()), quiet=True)
        ctx._teardown()
        res.seconds = time.monotonic() - t0
    with open(os.path.join(ctx.dir, "result.json"), "w") as f:
        json.dump(dataclasses.asdict(res), f, indent=1, default=str)
    util.log("=== %s: %s in %.1f s%s" % (sc.name, res.status, res.seconds, (" (" + res.error + ")") if res.error else ""))
    return res


def select(names=None, short=False, ctest=False):
    scs = all_scenarios()
    if names:
        unknown = [n for n in names if n not in REGISTRY]
        if unknown:
            raise SystemExit("unknown scenario(s): %s (known: %s)" % (", ".join(unknown),
                                                                       ", ".join(s.name for s in scs)))
        return [REGISTRY[n] for n in names]
    if ctest:
        return [s for s in scs if s.ctest]
    if short:
        return [s for s in scs if s.short]
    return scs
