#!/usr/bin/env python3
"""`gtmesh schema` against the loader (issue 28): the JSON Schema is made
from the loader's own table of fields, so the two must agree.

  1. the schema is a valid draft 2020-12 schema
  2. every shipped config (configs/full.yaml, configs/examples/*.yaml, the
     cluster template) validates against it, and check-config accepts it
  3. a typo'd key in each kind of object full.yaml holds (every object the
     schema can reach from it: records, endpoints, probes, SOA, gates...) is
     rejected by both check-config ("unknown key") and the schema
  4. values the schema can judge (an enum, an integer, a duration) are
     rejected by both as well
"""
import copy
import os
import subprocess
import sys
import tempfile

import yaml

try:
    import jsonschema
except ImportError:
    print("skip: python3-jsonschema is not installed")
    sys.exit(77)

SRC = os.environ.get("GTMESH_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", "..", ".."))
GTMESH = os.environ.get("GTMESH_BIN", os.path.join(SRC, "build", "tools", "gtmesh"))
failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    if not ok:
        failures.append(what)
    return ok


def check_config(path):
    r = subprocess.run([GTMESH, "check-config", path], capture_output=True, text=True, timeout=60)
    return r.returncode, r.stdout + r.stderr


def errors(validator, doc):
    return list(validator.iter_errors(doc))


def objects_in(value, schema, defs, found):
    """(def name, the dict) for every object the schema names by $ref."""
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[1]
        if isinstance(value, dict):
            found.setdefault(name, value)
            for k, v in value.items():
                sub = defs[name]["properties"].get(k)
                if sub:
                    objects_in(v, sub, defs, found)
        return
    if schema.get("type") == "array" and "items" in schema and isinstance(value, list):
        for item in value:
            objects_in(item, schema["items"], defs, found)


def main():
    out = subprocess.run([GTMESH, "schema"], capture_output=True, text=True, timeout=30)
    check(out.returncode == 0, "gtmesh schema runs")
    schema = yaml.safe_load(out.stdout)
    try:
        jsonschema.Draft202012Validator.check_schema(schema)
        check(True, "the schema is a valid draft 2020-12 schema")
    except jsonschema.SchemaError as e:
        check(False, "the schema is a valid draft 2020-12 schema: %s" % e)
        return 1
    validator = jsonschema.Draft202012Validator(schema)

    examples = [os.path.join(SRC, "configs", "full.yaml")]
    examples += sorted(os.path.join(SRC, "configs", "examples", f)
                       for f in os.listdir(os.path.join(SRC, "configs", "examples")) if f.endswith(".yaml"))
    for path in examples:
        doc = yaml.safe_load(open(path))
        errs = errors(validator, doc)
        check(not errs, "%s validates%s" % (os.path.relpath(path, SRC), "" if not errs else ": " + errs[0].message))
        rc, text = check_config(path)
        # dnssec.yaml names a key made by `gtmeshctl dnssec keygen` (not
        # shipped): a warning, not an error (tests/system/cli).
        check(rc == 0, "%s passes check-config" % os.path.relpath(path, SRC))
    template = open(os.path.join(SRC, "configs", "cluster.yaml.in")).read()
    for token in ["@FRA1@", "@FRA2@", "@IAD1@", "@IAD2@", "@SIN1@", "@SIN2@"]:
        template = template.replace(token, "8080")
    template = template.replace("@MMDB@", os.path.join(SRC, "tests", "data", "test.mmdb"))
    errs = errors(validator, yaml.safe_load(template))
    check(not errs, "the cluster template validates%s" % ("" if not errs else ": " + errs[0].message))

    full_path = os.path.join(SRC, "configs", "full.yaml")
    full = yaml.safe_load(open(full_path))
    full["geo"]["database"] = os.path.join(SRC, "tests", "data", "test.mmdb")
    found = {}
    objects_in(full, {"$ref": "#/$defs/config"}, dict(schema["$defs"], config=schema), found)
    check(len(found) >= 15, "full.yaml reaches %d kinds of object (%s)" % (len(found), ", ".join(sorted(found))))
    with tempfile.TemporaryDirectory() as work:
        def both_reject(doc, what, loader_says):
            path = os.path.join(work, "c.yaml")
            with open(path, "w") as f:
                yaml.safe_dump(doc, f, sort_keys=False)
            rc, text = check_config(path)
            errs = errors(validator, doc)
            check(rc == 1 and loader_says in text and errs,
                  "%s: check-config %s (%s), the schema %s" % (
                      what, "rejects" if rc == 1 else "ACCEPTS", loader_says if loader_says in text else text.strip()[:120],
                      "rejects" if errs else "ACCEPTS"))

        # Each kind of object once, from full.yaml, then from the examples
        # for the kinds full.yaml does not hold.
        defs = dict(schema["$defs"], config=schema)
        covered = set()
        for path in [full_path] + examples:
            base = yaml.safe_load(open(path))
            if isinstance(base.get("geo"), dict):
                base["geo"]["database"] = os.path.join(SRC, "tests", "data", "test.mmdb")
            if "dnssec" in open(path).read():
                continue  # its key file is not shipped: check-config fails on it anyway
            kinds = {}
            objects_in(base, {"$ref": "#/$defs/config"}, defs, kinds)
            for name in sorted(set(kinds) - covered):
                doc = copy.deepcopy(base)
                inner = {}
                objects_in(doc, {"$ref": "#/$defs/config"}, defs, inner)
                inner[name]["zz_typo"] = 1
                both_reject(doc, "a typo'd key in a %s (%s)" % (name, os.path.basename(path)), "unknown key")
                covered.add(name)
        check(len(covered) >= 18, "typos tried in %d kinds of object" % len(covered))

        def mutated(path_fn, what, loader_says):
            doc = copy.deepcopy(full)
            path_fn(doc)
            both_reject(doc, what, loader_says)

        mutated(lambda d: d["profiles"][1].__setitem__("method", "wieghted"), "an unknown routing method",
                "unknown method")
        mutated(lambda d: d["zones"][0]["records"][0].__setitem__("type", "AAA"), "an unknown record type",
                "unknown record type")
        mutated(lambda d: d["profiles"][1]["endpoints"][0].__setitem__("kind", "externl"), "an unknown endpoint kind",
                "unknown kind")
        mutated(lambda d: d["profiles"][1]["endpoints"][0].__setitem__("status", "up"), "an unknown endpoint status",
                "unknown status")
        mutated(lambda d: d["probes"][0].__setitem__("healthy_threshold", "two"), "a word for an integer",
                "expected an integer")
        mutated(lambda d: d["measurement"].__setitem__("host_interval", "10 seconds"), "a malformed duration",
                "expected a duration")
        mutated(lambda d: d["datacenters"][0].pop("name"), "a datacenter without a name", "required field is missing")
        mutated(lambda d: d["probes"][0].__setitem__("headers", ["X-A: b"]), "probe headers as a list",
                "expected a map")

    print("%d failure(s)" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
