#!/usr/bin/env bash
# Long fuzzing runs, recorded in docs/reliability.md (the fuzz region).
#
#   tests/fuzz/long_runs.sh [--build-dir DIR] [--ledger DIR] [--runs N] [--max-hours H]
#                           [--jobs J] [--no-report|--report-only] [TARGET...]
#
# Builds the targets (run_fuzz.sh: clang, libFuzzer + ASan + UBSan), then runs each until it has executed N inputs
# (default 10,000,000) in total or for H hours (default 3), J targets at a
# time (default 2). A target's runs go on from one corpus (DIR/corpus/TARGET,
# started from the committed seeds), so a target too slow for N executions in
# one sitting gets there over several runs: each run is appended to the
# target's ledger, LEDGER/TARGET.runs (when it ended, the commit, executions,
# seconds, exit status, coverage at start and end, corpus size), and the next
# run asks only for what is missing. The ledger lives in the source tree
# (default tests/fuzz/long-runs, committed with the report), so the record
# outlives a build directory and a machine; the grown corpus does not have to. Without TARGETs: every target in the
# manifest. Then rewrites the region between `<!-- fuzz:begin -->` and
# `<!-- fuzz:end -->` of docs/reliability.md: per target the executions in
# total and over how many runs, the time, the rate of the last run, coverage at
# the first run's start (the committed seeds) and the last run's end, and the
# verdict. A crash, leak, sanitizer report, timeout or out-of-memory fails the
# run and names the artifact. Long runs allow 60 s per input (run_fuzz.sh's
# 10 s is for CTest): they run for hours beside other work at low priority,
# where 10 s measured starvation rather than slowness. --no-report leaves the document alone;
# --report-only writes it from the ledger. Exit status: 0 every run clean,
# 1 otherwise.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build_dir=$root/build/fuzz
results=$here/long-runs
runs=10000000
hours=3
jobs=2
report=1
run=1
targets=()
usage() {
  echo "usage: $0 [--build-dir DIR] [--ledger DIR] [--runs N] [--max-hours H] [--jobs J] [--no-report|--report-only] [TARGET...]" >&2
  exit 2
}
while [ $# -gt 0 ]; do
  case $1 in
    --build-dir) build_dir=$2; shift 2 ;;
    --ledger) results=$2; shift 2 ;;
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

mkdir -p "$results"
seconds=$(awk -v h="$hours" 'BEGIN { printf "%d", h * 3600 }')

# Clean executions so far (the ledger's column 3 where column 5 is 0).
done_runs() { awk -F'\t' '$5 == 0 { n += $3 } END { printf "%d", n }' "$results/$1.runs" 2>/dev/null || echo 0; }

run_one() { # target
  local t=$1 out=$build_dir/$1.last
  local want=$((runs - $(done_runs "$t")))
  [ "$want" -gt 0 ] || { echo "$t: $runs executions already"; return 0; }
  local status=0
  "$here/run_fuzz.sh" --build-dir "$build_dir" --run-only --time "$seconds" "$t" -- -runs="$want" -timeout=60 > "$out" 2>&1 ||
    status=$?
  # "T_fuzz: N executions in S s (R exec/s), cov C ft F, corpus K entries[, FAILED ...]"
  local line n s cov ft corpus start
  line=$(grep -E "^${t}_fuzz: " "$out" | tail -1 || true)
  n=$(sed -nE 's/.*: ([0-9]+) executions.*/\1/p' <<< "$line")
  s=$(sed -nE 's/.* in ([0-9.]+) s .*/\1/p' <<< "$line")
  cov=$(sed -nE 's/.*cov ([0-9]+) ft ([0-9]+),.*/\1/p' <<< "$line")
  ft=$(sed -nE 's/.*cov ([0-9]+) ft ([0-9]+),.*/\2/p' <<< "$line")
  corpus=$(sed -nE 's/.*corpus ([0-9]+) entries.*/\1/p' <<< "$line")
  # Coverage once the corpus was loaded (libFuzzer's INITED line): where this run started.
  start=$(grep -m1 -oE '#[0-9]+[[:space:]]+INITED cov: [0-9]+ ft: [0-9]+' "$build_dir/$t.log" |
          sed -E 's/.*cov: ([0-9]+) ft: ([0-9]+)/\1\t\2/' || true)
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$(date -u '+%Y-%m-%d %H:%M UTC')" \
    "$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?')" "${n:-0}" "${s:-0}" "$status" \
    "${start:-?	?}" "${cov:-?}" "${ft:-?}" "${corpus:-?}" >> "$results/$t.runs"
  echo "${line:-$t: no result (exit $status)}"
}
export -f run_one done_runs
export here root build_dir seconds runs results
if [ $run = 1 ]; then
  "$here/run_fuzz.sh" --build-dir "$build_dir" --build-only --jobs "$jobs" "${targets[@]}"
  printf '%s\n' "${targets[@]}" | xargs -P "$jobs" -I{} bash -c 'run_one "$1"' _ {} || true
fi

# Ledger columns: 1 ended, 2 commit, 3 executions, 4 seconds, 5 status,
# 6 cov at start, 7 ft at start, 8 cov at end, 9 ft at end, 10 corpus[, 11 runs
# this line stands for].
failed=0
voided=""
rows=""
for t in "${targets[@]}"; do
  ledger=$results/$t.runs
  if [ ! -s "$ledger" ]; then
    rows+="| \`$t\` | not run | | | | | | | |"$'\n'
    continue
  fi
  # A line with an 11th column stands for that many runs (see long-runs/README.md).
  read -r total secs nruns bad <<< "$(awk -F'\t' '{ n += ($5 == 0 ? $3 : 0); s += $4; r += ($11 ~ /^[0-9]+$/ ? $11 : 1); if ($5 != 0) b++ }
                                      END { printf "%d %.0f %d %d", n, s, r, b }' "$ledger")"
  first=$(head -1 "$ledger")
  last=$(tail -1 "$ledger")
  rate=$(awk -F'\t' '{ printf "%d", ($4 > 0 ? $3 / $4 : 0) }' <<< "$last")
  start_cov=$(awk -F'\t' '{ printf "cov %s ft %s", $6, $7 }' <<< "$first")
  end_cov=$(awk -F'\t' '{ printf "cov %s ft %s", $8, $9 }' <<< "$last")
  corpus=$(cut -f10 <<< "$last")
  when=$(awk -F'\t' '{ print $1 ", " $2 }' <<< "$last")
  verdict="clean"
  if [ "$bad" -gt 0 ]; then
    failed=1
    artifact=$(ls "$build_dir/artifacts/$t" 2>/dev/null | head -1 || true)
    verdict="**FAILED** in $bad run(s) (${artifact:-see $build_dir/$t.log})"
  elif [ "$total" -lt "$runs" ]; then
    verdict="clean; **$(printf "%'d" "$total") of $(printf "%'d" "$runs") so far**"
  fi
  rows+="| \`$t\` | $(printf "%'d" "$total") | $nruns | ${secs} s | $rate | $start_cov | $end_cov | $corpus | $verdict | $when |"$'\n'
  # Runs set aside by hand (TARGET.void: the ledger line, then "# void: why"),
  # e.g. a false timeout because the fuzzer was stopped with SIGSTOP.
  if [ -s "$results/$t.void" ]; then
    voided+="- \`$t\`: $(wc -l < "$results/$t.void") run(s) voided:"$'\n'
    voided+=$(awk -F'\t' '{ printf "  - %s, %d executions, exit %s:%s\n", $1, $3, $5, substr($NF, index($NF, "void:") + 5) }' \
      "$results/$t.void")$'\n'
  fi
done

if [ $report = 1 ]; then
  clang=$( (clang++-14 --version 2>/dev/null || clang++ --version) | head -1)
  region=$(mktemp)
  {
    echo "Produced by \`tests/fuzz/long_runs.sh --runs $runs\` (runs of one target go on from one corpus; the"
    echo "ledger of each run is in tests/fuzz/long-runs/TARGET.runs), then \`--report-only\`: $clang, libFuzzer with"
    echo "ASan + UBSan, on $(nproc) core(s). \"At start\" is libFuzzer's coverage once the committed seeds"
    echo "(\`tests/fuzz/corpus/TARGET\`) were loaded in the first run, \"at end\" after the last run (cov = instrumented"
    echo "edges reached, ft = libFuzzer's finer features). Only clean runs count towards the executions."
    echo "CI runs every target for 20 s (\`fuzz.*\` in CTest)."
    echo
    echo "| Target | Executions | Runs | Time | Exec/s (last run) | Coverage at start | Coverage at end | Corpus | Result | Last run |"
    echo "|---|---|---|---|---|---|---|---|---|---|"
    printf '%s' "$rows"
    if [ -n "$voided" ]; then
      echo
      echo "Runs set aside (not counted, not findings; each artifact was run again and finishes in milliseconds):"
      echo
      printf '%s' "$voided"
    fi
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
