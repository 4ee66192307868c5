"""The results table and its place in docs/reliability.md: only the text
between `<!-- chaos:begin -->` and `<!-- chaos:end -->` is replaced (the
fuzz region and everything else stay byte for byte)."""
import datetime
import os
import platform
import re

from . import util

BEGIN = "<!-- chaos:begin -->"
END = "<!-- chaos:end -->"


def _cell(text):
    return str(text).replace("|", "\\|").replace("\n", " ")


def _count(v):
    return "-" if v is None else str(v)


def _convergence_cell(r):
    """Short: the worst step, or the steps that missed their bound."""
    steps = r.convergence
    if not steps:
        return "-"
    missed = [(label, secs, bound) for label, secs, bound in steps
              if secs is None or (bound is not None and secs > bound)]
    if missed:
        return "; ".join("%s: %s" % (label, "never" if secs is None else "%.1f s > %.1f s" % (secs, bound))
                         for label, secs, bound in missed)
    worst = max(steps, key=lambda st: st[1] / st[2] if st[2] else 0)
    label, secs, bound = worst
    return "%d step(s) within bounds; slowest %.1f s%s" % (len(steps), secs, " (bound %.1f s)" % bound if bound else "")


def table(results):
    rows = ["| Scenario | Fault | Property | Result | Convergence | Queries sent / answered / wrong "
            "| Configs acked / lost | Command |",
            "|---|---|---|---|---|---|---|---|"]
    for r in results:
        queries = "%d / %d / %d" % (r.sent, r.answered, r.wrong) if r.sent else "-"
        configs = "-" if r.acked is None else "%s / %s" % (_count(r.acked), _count(r.lost))
        rows.append("| `%s` | %s | %s | **%s** | %s | %s | %s | %s |" % (
            r.name, _cell(r.fault), _cell(r.prop), r.status, _cell(_convergence_cell(r)), queries, configs,
            ("`%s`" % r.command) if r.command else "-"))
    return "\n".join(rows)


def details(results):
    """One bullet per scenario: failed checks, every step's time, notes."""
    out = []
    for r in results:
        failed = [text for ok, text in r.checks if not ok]
        if r.error and r.error not in failed:
            failed.append(r.error)
        parts = []
        if failed:
            parts.append("failed: " + "; ".join(failed))
        if r.convergence:
            parts.append("steps: " + r.convergence_text())
        parts += r.notes
        out.append("- `%s` (%s, %.0f s): %s" % (r.name, r.status, r.seconds,
                                               " ".join(p if p.endswith(".") else p + "." for p in parts)
                                               .replace("\n", " ")))
    return "\n".join(out)


def binaries_description(bins):
    """The binary and the commit it was built from: a COMMIT file next to
    it (a copied snapshot of the binaries, see README), else the git HEAD
    of the folder it lives in."""
    gtmesh = bins[0]
    commit = None
    try:
        with open(os.path.join(os.path.dirname(gtmesh), "COMMIT")) as f:
            commit = f.read().strip() or None
    except OSError:
        r = util.run(["git", "-C", os.path.dirname(gtmesh), "rev-parse", "--short", "HEAD"], timeout=10)
        commit = r.stdout.strip() if r.returncode == 0 else None
    return "`%s`%s" % (gtmesh, " (built from commit %s)" % commit if commit else "")


def region(results, command, bins, seconds):
    passed = sum(1 for r in results if r.status == "PASS")
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        "Produced by `%s` on %s (%s, %s), %d scenario(s) in %.0f s: %d passed, %d failed. Each row's "
        "command re-runs that scenario alone with the same random choices (as root)."
        % (command, when, platform.node() or "?", binaries_description(bins), len(results), seconds, passed,
           len(results) - passed),
        "Convergence is measured from the fault (or heal) to the moment after which every responder",
        "answered only the expected answer; bounds are derived from the cluster config",
        "(tools/chaos/chaoslib/cluster.py `Bounds`). Queries come from the client namespace to every",
        "responder; \"wrong\" counts answers outside what the phase allows (timeouts are sent but not answered),",
        "and any wrong answer fails its scenario; windows that accept any answer are named in the notes.",
        "",
        table(results),
        "",
        "Per scenario (failed checks, every step against its bound, what was observed):",
        "",
        details(results),
    ]
    return "\n".join(lines)


def replace_region(path, new_region):
    """Rewrites only the chaos region of `path`; appends a section with
    the markers when the file lacks them."""
    try:
        with open(path) as f:
            text = f.read()
    except FileNotFoundError:
        text = "# Reliability\n"
    pattern = re.compile(re.escape(BEGIN) + r".*?" + re.escape(END), re.S)
    block = BEGIN + "\n" + new_region.rstrip("\n") + "\n" + END
    if pattern.search(text):
        text = pattern.sub(lambda m: block, text, count=1)
    else:
        text = text.rstrip("\n") + "\n\n## Chaos scenarios\n\n" + block + "\n"
    tmp = path + ".chaos-tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)
