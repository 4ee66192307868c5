#!/usr/bin/env bash
# Long fuzzing runs, recorded in docs/reliability.md (the fuzz region).
#
#   tests/fuzz/long_runs.sh [--build-dir DIR] [--runs N] [--max-hours H] [--jobs J]
#                           [--no-report|--report-only] [TARGET...]
#
# Builds the targets (run_fuzz.sh: clang, libFuzzer + ASan + UBSan), then runs
# each until it has executed N inputs (default 10,000,000) or for H hours
# (default 3), J targets at a time (default 2), keeping what each run found
# in DIR/corpus/TARGET (so a later run goes on from there). Without TARGETs:
# every target in the manifest. Then rewrites the region between
# `<!-- fuzz:begin -->` and `<!-- fuzz:end -->` of docs/reliability.md with
# one row per target: executions, time, rate, coverage when the run started
# (committed seeds plus what earlier runs found) and at its end, the verdict,
# and when and at which commit it ran. A crash, leak, sanitizer report,
# timeout or out-of-memory fails the run and names the artifact.
# --no-report leaves the document alone; --report-only writes it from the
# results of earlier runs (DIR/long-runs/), e.g. after running the slow and
# the fast targets separately. Exit status: 0 every run clean, 1 otherwise.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build_dir=$root/build/fuzz
runs=10000000
hours=3
jobs=2
report=1
run=1
targets=()
usage() {
  echo "usage: $0 [--build-dir DIR] [--runs N] [--max-hours H] [--jobs J] [--no-report|--report-only] [TARGET...]" >&2
  exit 2
}
while [ $# -gt 0 ]; do
  case $1 in
    --build-dir) build_dir=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --max-hours) hours=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    --no-report) report=0; shift ;;
    --report-only) run=0; shift ;;
    -*) usage ;;
    *) targets+=("$1"); shift ;;
  esac
done
[ -f "$build_dir/manifest.txt" ] ||
  { echo "long_runs: no $build_dir/manifest.txt: configure with CMake first" >&2; exit 2; }
[ ${#targets[@]} -gt 0 ] || mapfile -t targets < <(cut -f1 "$build_dir/manifest.txt" | sort -u)

results=$build_dir/long-runs
mkdir -p "$results"
seconds=$(awk -v h="$hours" 'BEGIN { printf "%d", h * 3600 }')

run_one() { # target
  local t=$1 out=$results/$1
  "$here/run_fuzz.sh" --build-dir "$build_dir" --run-only --time "$seconds" "$t" -- -runs="$runs" > "$out.out" 2>&1
  echo $? > "$out.status"
  # The coverage libFuzzer reports once the corpus is loaded (INITED): where the run started.
  grep -m1 -oE '#[0-9]+[[:space:]]+INITED cov: [0-9]+ ft: [0-9]+' "$build_dir/$t.log" | sed 's/.*INITED //' > "$out.start" || true
  date -u '+%Y-%m-%d %H:%M UTC' > "$out.ended"
  git -C "$root" rev-parse --short HEAD > "$out.commit" 2>/dev/null || true
}
export -f run_one
export here root build_dir seconds runs results
if [ $run = 1 ]; then
  "$here/run_fuzz.sh" --build-dir "$build_dir" --build-only --jobs "$jobs" "${targets[@]}"
  printf '%s\n' "${targets[@]}" | xargs -P "$jobs" -I{} bash -c 'run_one "$1"' _ {} || true
fi

failed=0
rows=""
for t in "${targets[@]}"; do
  line=$(grep -E "^${t}_fuzz: " "$results/$t.out" 2>/dev/null | tail -1 || true)
  status=$(cat "$results/$t.status" 2>/dev/null || echo 1)
  start_cov=$(cat "$results/$t.start" 2>/dev/null || true)
  # "T_fuzz: N executions in S s (R exec/s), cov C ft F, corpus K entries[, FAILED ...]"
  n=$(sed -nE 's/.*: ([0-9]+) executions.*/\1/p' <<< "$line")
  s=$(sed -nE 's/.* in ([0-9.]+) s .*/\1/p' <<< "$line")
  r=$(sed -nE 's/.*\(([0-9]+) exec\/s\).*/\1/p' <<< "$line")
  cov=$(sed -nE 's/.*cov ([0-9?]+) ft ([0-9?]+),.*/cov: \1 ft: \2/p' <<< "$line")
  corpus=$(sed -nE 's/.*corpus ([0-9]+) entries.*/\1/p' <<< "$line")
  verdict="clean"
  if [ "$status" != 0 ] || [ -z "$n" ]; then
    failed=1
    artifact=$(ls "$build_dir/artifacts/$t" 2>/dev/null | head -1 || true)
    verdict="**FAILED** (${artifact:-see $build_dir/$t.log})"
  elif [ "$n" -lt "$runs" ]; then
    verdict="clean; **stopped by the time bound** before $(printf "%'d" "$runs") executions"
  fi
  nfmt=$([ -n "$n" ] && printf "%'d" "$n" || echo "?")
  ended=$(cat "$results/$t.ended" 2>/dev/null || echo "?")
  at=$(cat "$results/$t.commit" 2>/dev/null || echo "?")
  rows+="| \`$t\` | $nfmt | ${s:-?} s | ${r:-?} | ${start_cov:-?} | ${cov:-?} | ${corpus:-?} | $verdict | $ended, $at |"$'\n'
  echo "${line:-$t: no result}"
done

if [ $report = 1 ]; then
  clang=$( (clang++-14 --version 2>/dev/null || clang++ --version) | head -1)
  region=$(mktemp)
  {
    echo "Produced by \`tests/fuzz/long_runs.sh --runs $runs [--max-hours H] [TARGET...]\` (then \`--report-only\`):"
    echo "$clang, libFuzzer with ASan + UBSan, on $(nproc) core(s); each row says when its run ended and at which commit."
    echo "Each target starts from its committed seeds (\`tests/fuzz/corpus/TARGET\`) plus what earlier runs in the same"
    echo "build folder found; \"at start\" is libFuzzer's coverage once that corpus is loaded (INITED), \"at end\" after"
    echo "the run (cov = instrumented edges reached, ft = libFuzzer's finer features). CI runs every target for 20 s"
    echo "(\`fuzz.*\` in CTest)."
    echo
    echo "| Target | Executions | Time | Exec/s | Coverage at start | Coverage at end | Corpus | Result | Run |"
    echo "|---|---|---|---|---|---|---|---|---|"
    printf '%s' "$rows"
  } > "$region"
  python3 - "$root/docs/reliability.md" "$region" <<'EOF'
import sys
path, region = sys.argv[1], open(sys.argv[2]).read()
text = open(path).read()
begin, end = "<!-- fuzz:begin -->", "<!-- fuzz:end -->"
a, b = text.index(begin) + len(begin), text.index(end)
open(path, "w").write(text[:a] + "\n" + region + text[b:])
EOF
  rm -f "$region"
  echo "long_runs: docs/reliability.md (fuzz region) rewritten"
fi
exit $failed
