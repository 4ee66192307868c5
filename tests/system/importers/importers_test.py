#!/usr/bin/env python3
"""gtmeshctl import: every fixture under tests/data/import/SYSTEM/ is imported,
the output must pass `gtmesh check-config`, and every row of the fixture's
table (FIXTURE.table.yaml) is answered by `gtmesh explain` with a state in
which the row's `down` targets are down and every other monitored endpoint
is up. The expected answers in the tables are what the source system's
documentation says it answers; they were written from that documentation,
not from the importer's output.

Table format:
  command: [SYSTEM, FILE, ...options]   FILE relative to the fixture folder;
                                        {data} is tests/data
  report: [substrings]                  each must appear on an "import: " line
  probes: [{field: value, ...}]         each must match some probe of the output
                                        (a subset match, nested maps too)
  aliases: {TARGET: [addresses]}        what each ALIAS target resolves to: the
                                        state's `aliases:` (docs/explain.md) for
                                        every target of an ALIAS record or alias
                                        endpoint; each must be one of the output
  resolver: [servers]                   the output's resolver.servers
  rows:
    - name: www.example.com  type: A  client: 198.51.100.7
      down: [targets]                   monitored endpoints with these targets are down
                                        (an ALIAS target: each of its addresses)
      answers: [values]                 exactly these answers (any order)
      one_of: [values]                  one answer, from these; over several seeds
                                        every one of them is seen
      nodata: true                      NOERROR without answers
      explains: [substrings]            each must appear in a step of the explanation
Every output is also checked to keep CNAMEs off the zone apex: no CNAME
record at "@", and no A/AAAA record there whose profile (or a profile it
nests) has a host-name endpoint or fail-safe answer, which would be answered
as a CNAME beside the apex SOA and NS (RFC 1034 3.6.2).
Also: an unreadable input and garbage JSON exit 1 with a clear message, and
a usage error exits 2.
"""

import ipaddress
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
DATA = os.path.join(SRC, "tests", "data")
GTMESH = os.environ.get("GTMESH_BIN", os.path.join(SRC, "build", "tools", "gtmesh"))
GTMESHCTL = os.path.join(os.path.dirname(GTMESH), "gtmeshctl")
SEEDS = 24

try:
    import yaml
except ImportError:
    print("SKIP: python3-yaml is not installed")
    sys.exit(77)

failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL: " + msg)


def run(args, timeout=60):
    return subprocess.run(args, capture_output=True, text=True, timeout=timeout)


TYPES = "A|AAAA|CNAME|MX|TXT|SRV"


def answers_of(outcome):
    """'NOERROR A 192.0.2.1 A 192.0.2.2, ttl 30' -> ('NOERROR', ['192.0.2.1', ...])."""
    rcode, _, rest = outcome.partition(" ")
    if rcode != "NOERROR":
        return rcode.rstrip(":,"), []
    rest = re.sub(r", ttl \d+.*$", "", rest)
    values = re.findall(r"(?:^| )(?:%s) (.+?)(?= (?:%s) |$)" % (TYPES, TYPES), rest)
    return rcode, [norm(v) for v in values]


def norm(v):
    return str(v).strip().rstrip(".").lower()


def monitored_endpoints(config):
    for p in config.get("profiles", []):
        for e in p.get("endpoints", []):
            if e.get("kind") == "external" and "monitor" in e:
                yield p["name"], e["name"], norm(e["target"])


def alias_targets(config):
    """{target: monitored?} over ALIAS records and alias endpoints."""
    out = {}
    for z in config.get("zones", []):
        for r in z.get("records", []):
            if r.get("type") == "ALIAS":
                t = norm(r["target"])
                out[t] = out.get(t, False) or "monitor" in r
    for p in config.get("profiles", []):
        for e in p.get("endpoints", []):
            if e.get("kind") == "alias":
                t = norm(e["target"])
                out[t] = out.get(t, False) or "monitor" in e
    return out


def state_for(config, down, path, resolved):
    """`resolved`: {target: [addresses]}, the table's aliases."""
    down = {norm(d) for d in down or []}
    lines = ["now: 2026-11-29T12:00:00Z", "endpoints:"]
    n = 0
    for profile, endpoint, target in monitored_endpoints(config):
        lines.append("  %s/%s: %s" % (profile, endpoint, "down" if target in down else "up"))
        n += 1
    if n == 0:
        lines[-1] = "endpoints: {}"
    targets = alias_targets(config)
    if targets:
        lines.append("aliases:")
        for target, monitored in sorted(targets.items()):
            addresses = [str(a) for a in resolved.get(target, [])]
            entry = "{addresses: [%s]" % ", ".join(addresses)
            if monitored and target in down:
                entry += ", down: [%s]" % ", ".join(addresses)
            lines.append("  %s.: %s}" % (target, entry))
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def explain(out, state, row, seed, steps=None):
    args = [GTMESH, "explain", "--config", out, "--state", state, row["name"], row.get("type", "A"),
            "--client", row.get("client", "192.0.2.1"), "--json", "--seed", str(seed)]
    p = run(args)
    if p.returncode != 0:
        return None, "explain exited %d: %s" % (p.returncode, p.stderr.strip())
    doc = json.loads(p.stdout)
    if steps is not None:
        steps.extend(s.get("note", "") for s in doc.get("steps", []))
    return answers_of(doc["outcome"]), doc["outcome"]


def is_address(value):
    try:
        ipaddress.ip_address(str(value))
        return True
    except ValueError:
        return False


def check_apex(label, config):
    """No CNAME at a zone apex, directly or through a profile."""
    profiles = {p["name"]: p for p in config.get("profiles", [])}

    def hosts(name, seen):
        p = profiles.get(name)
        if p is None or name in seen:
            return []
        seen.add(name)
        found = [str(v) for v in p.get("fail_safe", []) if not is_address(v)]
        for e in p.get("endpoints", []):
            if e.get("kind") == "external" and not is_address(e.get("target")):
                found.append(str(e["target"]))
            elif e.get("kind") == "nested":
                found += hosts(e["profile"], seen)
        return found

    for z in config.get("zones", []):
        for r in z.get("records", []):
            if r.get("name") != "@":
                continue
            if r.get("type") == "CNAME":
                fail("%s: a CNAME record at the apex of %s" % (label, z["name"]))
            elif "profile" in r:
                bad = hosts(r["profile"], set())
                if bad:
                    fail("%s: the apex %s record of %s reaches host names %s (answered as CNAMEs)" %
                         (label, r.get("type"), z["name"], bad))


def subset_match(want, have):
    if isinstance(want, dict):
        return isinstance(have, dict) and all(k in have and subset_match(v, have[k]) for k, v in want.items())
    return norm(want) == norm(have)


def check_fixture(system, table_path, tmp):
    folder = os.path.dirname(table_path)
    label = os.path.relpath(table_path, DATA)
    with open(table_path) as f:
        table = yaml.safe_load(f)
    cmd = [c.replace("{data}", DATA) for c in table["command"]]
    cmd = [cmd[0]] + [os.path.join(folder, c) if c.endswith((".json", ".yaml")) and not os.path.isabs(c) else c
                      for c in cmd[1:]]
    out = os.path.join(tmp, os.path.basename(table_path).replace(".table.yaml", ".gtmesh.yaml"))
    p = run([GTMESHCTL, "import"] + cmd + ["-o", out])
    if p.returncode != 0:
        fail("%s: import exited %d: %s" % (label, p.returncode, p.stderr.strip()))
        return
    report = [l for l in p.stderr.splitlines() if l.startswith("import: ")]
    stray = [l for l in p.stderr.splitlines() if l and not l.startswith("import: ")]
    if stray:
        fail("%s: stderr lines without the import: prefix: %s" % (label, stray))
    for want in table.get("report", []):
        if not any(want in l for l in report):
            fail("%s: no report line contains %r (report: %s)" % (label, want, report))
    c = run([GTMESH, "check-config", out])
    if c.returncode != 0:
        fail("%s: check-config rejected the output: %s%s" % (label, c.stdout, c.stderr))
        return
    with open(out) as f:
        config = yaml.safe_load(f)
    check_apex(label, config)
    resolved = {norm(t): a for t, a in (table.get("aliases") or {}).items()}
    targets = alias_targets(config)
    for target in sorted(set(resolved) - set(targets)):
        fail("%s: the table resolves %s, which no ALIAS record or alias endpoint of the output names (targets: %s)" %
             (label, target, sorted(targets)))
    for target in sorted(set(targets) - set(resolved)):
        fail("%s: the output has the ALIAS target %s, which the table's aliases: does not resolve" % (label, target))
    if "resolver" in table:
        have = (config.get("resolver") or {}).get("servers")
        if have != table["resolver"]:
            fail("%s: resolver.servers is %s, expected %s" % (label, have, table["resolver"]))
    for want in table.get("probes", []):
        if not any(subset_match(want, probe) for probe in config.get("probes", [])):
            fail("%s: no probe matches %s (probes: %s)" % (label, want, config.get("probes")))
    state = os.path.join(tmp, "state.yaml")
    for i, row in enumerate(table.get("rows", [])):
        where = "%s row %d (%s %s from %s, down %s)" % (label, i + 1, row["name"], row.get("type", "A"),
                                                       row.get("client", "192.0.2.1"), row.get("down", []))
        state_for(config, row.get("down"), state, resolved)
        if "one_of" in row:
            allowed = {norm(v) for v in row["one_of"]}
            seen = set()
            for seed in range(1, SEEDS + 1):
                got, outcome = explain(out, state, row, seed)
                if got is None:
                    fail("%s: %s" % (where, outcome))
                    break
                rcode, values = got
                if rcode != "NOERROR" or len(values) != 1 or values[0] not in allowed:
                    fail("%s: expected one answer of %s, got %s" % (where, sorted(allowed), outcome))
                    break
                seen.add(values[0])
            else:
                if seen != allowed:
                    fail("%s: over %d seeds only %s were answered, expected each of %s" %
                         (where, SEEDS, sorted(seen), sorted(allowed)))
            continue
        steps = []
        got, outcome = explain(out, state, row, 1, steps)
        if got is None:
            fail("%s: %s" % (where, outcome))
            continue
        for want in row.get("explains", []):
            if not any(want in s for s in steps):
                fail("%s: no step of the explanation says %r (steps: %s)" % (where, want, steps))
        if "answers" not in row and not row.get("nodata"):
            continue
        rcode, values = got
        if row.get("nodata"):
            if rcode != "NODATA" and not (rcode == "NOERROR" and not values):
                fail("%s: expected NODATA, got %s" % (where, outcome))
        elif sorted(values) != sorted(norm(v) for v in row["answers"]) or rcode != "NOERROR":
            fail("%s: expected %s, got %s" % (where, row["answers"], outcome))


def check_bad_inputs(tmp):
    missing = os.path.join(tmp, "no-such-file.json")
    p = run([GTMESHCTL, "import", "azure-tm", missing])
    if p.returncode != 1 or "cannot read" not in p.stderr:
        fail("unreadable input: expected exit 1 and 'cannot read', got %d: %s" % (p.returncode, p.stderr))
    garbage = os.path.join(tmp, "garbage.json")
    with open(garbage, "w") as f:
        f.write('{"ResourceRecordSets": [ {"Name": "www.example.com.", ')
    for system in ("azure-tm", "route53"):
        p = run([GTMESHCTL, "import", system, garbage])
        if p.returncode != 1 or "not valid JSON" not in p.stderr or "garbage.json:1:" not in p.stderr:
            fail("garbage JSON (%s): expected exit 1 naming file:line and 'not valid JSON', got %d: %s" %
                 (system, p.returncode, p.stderr))
        if p.stdout:
            fail("garbage JSON (%s): printed a config anyway" % system)
    empty = os.path.join(tmp, "empty.json")
    open(empty, "w").close()
    p = run([GTMESHCTL, "import", "route53", empty])
    if p.returncode != 1 or "empty" not in p.stderr:
        fail("empty input: expected exit 1 saying empty, got %d: %s" % (p.returncode, p.stderr))
    wrong = os.path.join(tmp, "wrong.json")
    with open(wrong, "w") as f:
        f.write('{"hello": "world"}')
    for system in ("azure-tm", "route53"):
        p = run([GTMESHCTL, "import", system, wrong])
        if p.returncode != 1 or "not a" not in p.stderr:
            fail("JSON of another kind (%s): expected exit 1 with 'not a ...', got %d: %s" %
                 (system, p.returncode, p.stderr))
    bad_yaml = os.path.join(tmp, "example.org.yaml")
    with open(bad_yaml, "w") as f:
        f.write("www:\n  type: A\n  values: [192.0.2.1\n")
    p = run([GTMESHCTL, "import", "octodns", bad_yaml])
    if p.returncode != 1 or "example.org.yaml:" not in p.stderr:
        fail("bad YAML: expected exit 1 naming the file, got %d: %s" % (p.returncode, p.stderr))
    for args in (["import"], ["import", "bind", "x"], ["import", "azure-tm", "a.json", "--bogus"],
                 ["import", "azure-tm", "a.json", "-o"],
                 # Azure Traffic Manager has no alias: no --resolver
                 ["import", "azure-tm", "a.json", "--resolver", "10.0.0.2"]):
        p = run([GTMESHCTL] + args)
        if p.returncode != 2:
            fail("usage error %s: expected exit 2, got %d" % (args, p.returncode))
    # A resolver is an address the deciders ask over DNS, at most 8 of them.
    nine = []
    for i in range(9):
        nine += ["--resolver", "10.0.0.%d" % (i + 1)]
    for args, says in ((["route53", "a.json", "--resolver", "dns.example.net"], "'dns.example.net': expected ADDRESS"),
                       (["octodns", "a.yaml", "--resolver", "10.0.0.2:99999"], "'10.0.0.2:99999': expected ADDRESS"),
                       (["route53", "a.json", "--resolver", "[2001:db8::53]53"], "expected ADDRESS"),
                       (["route53", "a.json"] + nine, "at most 8 --resolver")):
        p = run([GTMESHCTL, "import"] + args)
        if p.returncode != 2 or says not in p.stderr:
            fail("--resolver %s: expected exit 2 saying %r, got %d: %s" % (args[2:], says, p.returncode, p.stderr))


def main():
    if not (os.access(GTMESH, os.X_OK) and os.access(GTMESHCTL, os.X_OK)):
        print("SKIP: %s or %s not built" % (GTMESH, GTMESHCTL))
        return 77
    tables = []
    for system in ("azure-tm", "octodns", "route53"):
        folder = os.path.join(DATA, "import", system)
        for name in sorted(os.listdir(folder)):
            if name.endswith(".table.yaml"):
                tables.append((system, os.path.join(folder, name)))
    rows = 0
    with tempfile.TemporaryDirectory(prefix="gtmesh-import-") as tmp:
        for system, table in tables:
            with open(table) as f:
                rows += len(yaml.safe_load(f).get("rows", []))
            check_fixture(system, table, tmp)
        check_bad_inputs(tmp)
    print("%d fixture(s), %d row(s), %d failure(s)" % (len(tables), rows, len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
