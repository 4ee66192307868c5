"""The linearizability check of acknowledged config pushes, isolated from
how histories are read (Cluster.config_history: `gtmeshctl configs`) so
that it can be tested on its own (`python3 -m chaoslib.history`).

Property: every acknowledged push is present, at its acknowledged version
and in acknowledgement order, on every decider at the end.

Input:
  acked      [(version, sha)] in the order the acknowledgements arrived
             (sha: sha256 hex of the pushed YAML, or a prefix of it)
  histories  {decider: [(version, sha or None)]}: the configs each decider
             holds, oldest first; None = the decider did not answer
  partial    True when a history shows only some versions (the newest, or
             the retained tail): versions it does not show are counted as
             unverifiable instead of missing. `gtmeshctl configs` shows the
             whole committed history (10,000 versions), so the harness
             passes False.
"""


def _same(a, b):
    if a is None or b is None:
        return None
    a, b = a.lower(), b.lower()
    return a.startswith(b) or b.startswith(a)


def check(acked, histories, partial=False):
    out = {"acked": len(acked), "lost": [], "order_violations": [], "conflicts": [], "missing": {},
           "unverifiable": 0, "unreachable": []}
    lost = set()  # indexes into acked

    # 1. Acknowledgement order = version order.
    for i in range(1, len(acked)):
        if acked[i][0] <= acked[i - 1][0]:
            out["order_violations"].append("acknowledgement #%d is v%d, after v%d" % (i + 1, acked[i][0], acked[i - 1][0]))

    # 2. One version, two acknowledged configs: at most one can survive.
    by_version = {}
    for i, (v, sha) in enumerate(acked):
        by_version.setdefault(v, []).append(i)
    for v, idxs in sorted(by_version.items()):
        shas = {acked[i][1][:16] for i in idxs}
        if len(shas) > 1:
            out["conflicts"].append("v%d acknowledged for %d different configs (%s)" % (v, len(shas), ", ".join(sorted(shas))))

    # 3. Every decider's history.
    for d, hist in sorted(histories.items()):
        if hist is None:
            out["unreachable"].append(d)
            continue
        held = {}
        for v, sha in hist:
            held.setdefault(v, []).append(sha)
        newest = max(held) if held else 0
        oldest = min(held) if held else 0
        missing = []
        for i, (v, sha) in enumerate(acked):
            if v in held:
                known = [s for s in held[v] if s is not None]
                if not known:
                    # Version present, content not shown: fine unless the version is contested.
                    if len({acked[j][1][:16] for j in by_version[v]}) > 1:
                        out["unverifiable"] += 1
                    continue
                if not any(_same(s, sha) for s in known):
                    lost.add(i)
                    missing.append("v%d holds %s, acknowledged %s" % (v, known[0][:16], sha[:16]))
            elif v > newest:
                lost.add(i)
                missing.append("v%d not there (newest v%d)" % (v, newest))
            elif partial or v < oldest:
                out["unverifiable"] += 1  # older than what the decider shows / retains
            else:
                lost.add(i)
                missing.append("v%d not in its history" % v)
        if missing:
            out["missing"][d] = missing
    # A contested version loses all but (at most) one of its configs.
    for v, idxs in by_version.items():
        if len({acked[i][1][:16] for i in idxs}) > 1:
            survivors = [i for i in idxs if i not in lost]
            for i in survivors[1:]:
                lost.add(i)
    out["lost"] = sorted(lost)
    return out


def _self_test():
    a = [(2, "aa"), (3, "bb"), (4, "cc")]
    r = check(a, {"d1": [(2, "aa"), (3, "bb"), (4, "cc")], "d2": [(2, "aa"), (3, "bb"), (4, "cc")]})
    assert r["lost"] == [] and not r["order_violations"], r
    r = check(a, {"d1": [(2, "aa"), (4, "cc")]})
    assert r["lost"] == [1], r
    r = check(a, {"d1": [(4, "cc")]}, partial=True)
    assert r["lost"] == [] and r["unverifiable"] == 2, r
    r = check([(2, "aa"), (2, "bb"), (3, "cc")], {"d1": [(3, "cc")]}, partial=True)
    assert r["lost"] == [1] and r["conflicts"] and r["order_violations"], r
    r = check(a, {"d1": [(3, "bb")]}, partial=True)
    assert r["lost"] == [2], r
    r = check(a, {"d1": [(4, "zz")]}, partial=True)
    assert r["lost"] == [2], r
    return True


if __name__ == "__main__":
    print("history self-test:", _self_test())
