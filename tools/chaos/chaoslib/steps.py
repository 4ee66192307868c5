"""Steps several scenarios share (docs/STYLE.md point 18): scenarios import
them from here and never from each other.

  baseline(ctx, c, q)              every responder answers fra (or `dc`) before the fault
  hold(seconds, t)                 keeps a fault in place for its stated duration
  marker(n)                        the answer of cfg.chaos.example for config marker n
  history_has / acked_lost         one decider's / every decider's committed history
                                   (acked_lost polls to a bound)
  wait_histories(ctx, c, acked, bound)
                                   every decider's history holds every acknowledged
                                   push, polled until the stated bound and failed
                                   only past it
  first_answer_after_restart(c, d) a dead decider restarted, queried as soon as it binds

`python3 -m chaoslib.steps` (from tools/chaos) checks that no scenario
module imports another one."""
import ast
import os
import time

from . import util
from .cluster import WWW, marker_address, www
from .dns import TIMEOUT, A


def baseline(ctx, c, q, dc="fra"):
    """Every responder answers `dc` (the healthy cluster's answer) within 10 s."""
    t = q.mark("baseline")
    q.expect(t, www(dc))
    secs = q.wait_converged(t, www(dc), 10)
    ctx.require(secs is not None, "baseline: every responder answers %s" % www(dc))
    return t


def hold(seconds_since, t):
    """Keeps a fault in place until `seconds_since` after t (the fault's
    duration is a scenario parameter, not a synchronisation)."""
    left = t + seconds_since - time.monotonic()
    if left > 0:
        time.sleep(left)


def marker(n):
    """What cfg.chaos.example answers under the config pushed with marker n."""
    return A(marker_address(n))


def history_has(c, d, version, sha):
    """True when decider d's committed history has sha at version."""
    return any(h.version == version and h.sha == sha for h in (c.config_history(d) or []))


def acked_lost(c, pushes, bound=0.0):
    """How many acknowledged pushes are not at their version on every
    decider, polled until none is or `bound` seconds passed (followers apply
    a commit a heartbeat after the acknowledgement: wait_histories)."""
    def lost_now():
        hists = {d: c.config_history(d) or [] for d in c.deciders}
        return sum(1 for r in pushes if r.acked and not all(
            any(h.version == r.version and h.sha == r.sha for h in hist) for hist in hists.values()))
    _, _, lost = util.wait_for(lost_now, bound, 0.2, want=0)
    return lost


def wait_histories(ctx, c, acked, bound, deciders=None, why=""):
    """Checks that every decider's committed history holds every push in
    `acked`. An acknowledgement promises a majority commit and the
    answering decider's own application (docs/mesh.md, "A push"); the
    others apply it when the leader's next message tells them it is
    committed. So each history is polled until `bound` (stated in the check)
    and the check fails only past it. Returns {decider: [ConfigRecord]}."""
    want = {r.sha for r in acked}
    out = {}
    for d in deciders or list(c.deciders):
        ok, secs, hist = util.wait_for(
            lambda: (lambda h: h if h is not None and want <= {x.sha for x in h} else None)(c.config_history(d)),
            bound, 0.1)
        hist = hist if hist is not None else (c.config_history(d) or [])
        have = len(want & {x.sha for x in hist})
        ctx.check(ok, "%s's history holds all %d acknowledged pushes within %.1f s%s (%d of them, after %s)"
                  % (d, len(want), bound, " (" + why + ")" if why else "", have, util.fmt_s(secs)))
        out[d] = hist
    return out


def first_answer_after_restart(c, d, seconds=10, name=WWW):
    """Restarts decider d (already dead) and queries its responder as soon as
    its port file is there: (first Answer, seconds from start to that answer)."""
    t0 = time.monotonic()
    c.start_decider(d)
    ans = TIMEOUT
    deadline = t0 + seconds
    while time.monotonic() < deadline:
        ans = c.query(d, name, timeout=0.3)
        if ans != TIMEOUT:
            break
    return ans, time.monotonic() - t0


def scenario_imports():
    """[(module, imported scenario module)] for every scenario module that
    imports another one (there must be none)."""
    folder = os.path.join(os.path.dirname(os.path.abspath(__file__)), "scenarios")
    names = {f[:-3] for f in os.listdir(folder) if f.endswith(".py") and f != "__init__.py"}
    bad = []
    for name in sorted(names):
        tree = ast.parse(open(os.path.join(folder, name + ".py")).read())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level == 1:
                targets = [node.module] if node.module else [a.name for a in node.names]
                bad += [(name, t.split(".")[0]) for t in targets if t.split(".")[0] in names]
            elif isinstance(node, ast.ImportFrom) and node.level == 2 and node.module in ("scenarios",):
                bad += [(name, a.name) for a in node.names if a.name in names]
    return bad


if __name__ == "__main__":
    found = scenario_imports()
    for module, other in found:
        print("scenarios/%s.py imports scenarios/%s.py: move the shared step into chaoslib/steps.py" % (module, other))
    print("scenario imports: %s" % ("none between scenarios" if not found else "%d found" % len(found)))
    raise SystemExit(1 if found else 0)
