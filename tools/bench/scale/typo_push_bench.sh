#!/bin/bash
# typo_push_bench.sh - memory of a decider that refuses a pushed config with
# one typo (issue 42: "memory during that rejection stays within the peak
# bound"). One decider serves the scale bench's config of RECORDS records
# (version 1, from --config); `gtmeshctl push --no-local-check` then sends
# the same file with `answers:` of one DC-mode record misspelt, so that the
# decider itself loads and refuses it. Prints the decider's serving VmRSS,
# its VmRSS peak while it loads the push (sampled every 20 ms) and their
# ratio, what gtmeshctl said, and whether the running config stayed.
#
#   RECORDS=1000000 tools/bench/scale/typo_push_bench.sh
#
# Environment: RECORDS (default 1000000), BUILD (default build), RUN_DIR.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../../.." && pwd)
# shellcheck source=bench_lib.sh
. "$HERE/bench_lib.sh"
RECORDS=${RECORDS:-1000000}
BUILD=${BUILD:-$ROOT/build}
GTMESH=$BUILD/tools/gtmesh
GTMESHCTL=$BUILD/tools/gtmeshctl
RUN_DIR=${RUN_DIR:-$(mktemp -d /tmp/gtmesh-typo.XXXXXX)}
die() { echo "typo_push_bench: $*" >&2; exit 1; }
[ -x "$GTMESH" ] && [ -x "$GTMESHCTL" ] || die "no gtmesh/gtmeshctl in $BUILD/tools (build first)"
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null; rm -rf "$RUN_DIR"; }
trap cleanup EXIT

read -r dc_name _ < <(python3 "$HERE/gen_config.py" --records "$RECORDS" "$RUN_DIR/cfg")
# The typo: the DC-mode record at 60 % of the file loses an `e` of `answers:`.
line=$(grep -n "name: dc$((RECORDS * 3 / 10 + 68))," "$RUN_DIR/cfg/gtmesh.yaml" | cut -d: -f1)
[ -n "$line" ] || die "no record to misspell"
sed "${line}s/answers:/answrs:/" "$RUN_DIR/cfg/gtmesh.yaml" > "$RUN_DIR/cfg/typo.yaml"
start_one_decider "$RUN_DIR/decider.log"
ctl() { "$GTMESHCTL" --decider "127.0.0.1:$mesh_port" --timeout 120s "$@"; }
wait_config_version "$GTMESHCTL" "$mesh_port" 1 "$pid" 600 || die "$(tail -3 "$RUN_DIR/decider.log")"
answer() { # rcode and addresses of the last DC-mode record
  dig +noall +answer +comments +time=2 +tries=1 @127.0.0.1 -p "$dns_port" "$dc_name" A |
    awk '/status:/ { sub(",", "", $6); s = $6 } $4 == "A" { a = a " " $5 } END { print s a }'
}
# No agents: it answers (fail-safe) once its readiness bound has passed.
for _ in $(seq 1 60); do
  before=$(answer)
  [ "${before%% *}" = NOERROR ] && break
  sleep 1
done
serving=$(kb "$pid" VmRSS)
echo "records $RECORDS, typo at line $line; decider serving: VmRSS $((serving / 1024)) MB, VmHWM $(($(kb "$pid" VmHWM) / 1024)) MB"
(
  max=0
  while [ ! -e "$RUN_DIR/stop" ]; do
    r=$(kb "$pid" VmRSS)
    [ -n "$r" ] && [ "$r" -gt "$max" ] && max=$r && echo "$max" > "$RUN_DIR/max"
    sleep 0.02
  done
) &
sampler=$!
start=$(now)
ctl push --no-local-check "$RUN_DIR/cfg/typo.yaml" > "$RUN_DIR/push.out" 2>&1
rc=$?
took=$(awk -v a="$start" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }')
sleep 2
touch "$RUN_DIR/stop"
wait "$sampler"
max=$(cat "$RUN_DIR/max")
echo "push: exit $rc after $took s:"
sed 's/^/  /' "$RUN_DIR/push.out" | cut -c1-220
awk -v m="$max" -v s="$serving" 'BEGIN { printf "decider VmRSS peak during the push: %d MB, %.2fx its serving RSS (the bound: 1.5x)\n", m / 1024, m / s }'
echo "after: VmRSS $(($(kb "$pid" VmRSS) / 1024)) MB; $(ctl status 2>/dev/null | grep -o 'config version [0-9]*' | head -1)"
after=$(answer)
[ "$before" = "$after" ] && echo "answers unchanged: $after" || echo "ANSWERS CHANGED: before $before, after $after"
[ "$rc" -ne 0 ] || echo "THE PUSH WAS ACCEPTED"
