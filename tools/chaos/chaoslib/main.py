"""Entry points of tools/chaos/run, tools/chaos/run-all and tools/chaos/cleanup."""
import argparse
import os
import shlex
import shutil
import sys
import time

from . import util

SKIP = 77  # CTest SKIP_RETURN_CODE
REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
REPORT = os.path.join(REPO, "docs", "reliability.md")


def _common(p):
    p.add_argument("--short", action="store_true", help="short mode: fewer rounds, shorter phases")
    p.add_argument("--keep", action="store_true", help="keep the run folder (logs) even when everything passed")
    p.add_argument("--seed", type=int, help="seed of the random choices (printed at the start)")
    p.add_argument("--list", action="store_true", help="list the scenarios and exit")


def _list(scs):
    for s in scs:
        print("%-22s %s%s\n    fault:    %s\n    property: %s" % (
            s.name, "[short]" if s.short else "", " [ctest]" if s.ctest else "", s.fault, s.prop))


def _run(scs, args, write_report, command):
    from .scenario import Run, run_one
    from . import report
    why = util.missing_prerequisites()
    if why:
        print("skip: " + why, flush=True)
        return SKIP
    for tool in ("dig", "dnsperf"):
        if not shutil.which(tool):
            print("note: %s is not installed; scenarios that need it will fail" % tool)
    run = Run(short=args.short, keep=args.keep, seed=args.seed)
    results = []
    t0 = time.monotonic()
    try:
        for sc in scs:
            results.append(run_one(run, sc))
    finally:
        run.close()
    seconds = time.monotonic() - t0
    print()
    print(report.table(results))
    print()
    print(report.details(results))
    print()
    ok = all(r.status == "PASS" for r in results)
    if write_report:
        report.replace_region(REPORT, report.region(results, command, run.bins, seconds))
        print("wrote the chaos region of %s" % REPORT)
    if ok and not args.keep:
        shutil.rmtree(run.dir, ignore_errors=True)
    else:
        print("logs: %s" % run.dir)
    print("%d scenario(s): %d passed, %d failed" % (len(results), sum(r.status == "PASS" for r in results),
                                                    sum(r.status != "PASS" for r in results)))
    return 0 if ok else 1


def run_main(argv=None):
    from .scenario import select, all_scenarios
    p = argparse.ArgumentParser(prog="tools/chaos/run", description="Run chaos scenarios by name.")
    p.add_argument("names", nargs="*", help="scenario names (see --list)")
    p.add_argument("--ctest", action="store_true", help="the CTest subset (when no names are given)")
    p.add_argument("--list-ctest", action="store_true", help="print the names of the CTest subset, one a line")
    _common(p)
    args = p.parse_args(argv)
    if args.list:
        _list(all_scenarios())
        return 0
    if args.list_ctest:
        print("\n".join(s.name for s in all_scenarios() if s.ctest))
        return 0
    if not args.names and not args.ctest:
        p.error("name at least one scenario (or --ctest / --list)")
    scs = select(args.names, short=args.short, ctest=args.ctest)
    return _run(scs, args, False, "tools/chaos/run " + " ".join(shlex.quote(a) for a in (argv or sys.argv[1:])))


def run_all_main(argv=None):
    from .scenario import select, all_scenarios
    p = argparse.ArgumentParser(prog="tools/chaos/run-all",
                                description="Run every chaos scenario and write the chaos region of "
                                            "docs/reliability.md.")
    p.add_argument("--only", nargs="+", metavar="NAME", help="run only these scenarios")
    p.add_argument("--no-report", action="store_true", help="do not touch docs/reliability.md")
    _common(p)
    args = p.parse_args(argv)
    if args.list:
        _list(all_scenarios())
        return 0
    scs = select(args.only, short=args.short)
    command = "tools/chaos/run-all" + ("".join(" " + shlex.quote(a) for a in (argv or sys.argv[1:])))
    return _run(scs, args, not args.no_report, command)


def cleanup_main(argv=None):
    from . import janitor
    p = argparse.ArgumentParser(prog="tools/chaos/cleanup",
                                description="Remove leftovers of chaos runs (namespaces, their processes, tmpfs "
                                            "mounts, state files) whose harness process is gone. Only names with "
                                            "the gtchaos- prefix are touched.")
    p.add_argument("--force", action="store_true", help="also runs whose owning process is still alive")
    p.add_argument("--dry-run", action="store_true", help="only list what would be removed")
    p.add_argument("runs", nargs="*", help="only these run ids (gtchaos-xxxxxx)")
    args = p.parse_args(argv)
    if os.geteuid() != 0:
        print("cleanup needs root", file=sys.stderr)
        return 1
    runs = janitor.leftovers(force=args.force)
    if args.runs:
        runs = [r for r in runs if r in args.runs]
    if not runs:
        print("no leftovers")
        return 0
    for rid in runs:
        if args.dry_run:
            print("would remove %s" % rid)
            continue
        for line in janitor.remove_run(rid):
            print(line)
    return 0
