#!/bin/bash
# edit_push_bench.sh - a push of a one-line edit to a decider serving the
# scale bench's config of RECORDS records (issue 42, "Changes at size"):
# from `gtmeshctl push` to the decider answering the edit. One decider
# serves the config (version 1, from --config); each round pushes the same
# file with the TTL of one DC-mode record (at 30 % of the records) changed,
# under the same file name, and asks the decider's DNS every 10 ms until
# that TTL comes back. Round 0 gives the pushes their file name (read in
# proportion too: the config names no relative path); rounds 1..ROUNDS are
# read in proportion (docs/config.md, "Changes at size"). Prints per round the
# acknowledgement and the answer, then how the decider loaded them.
#
#   RECORDS=100000 ROUNDS=5 tools/bench/scale/edit_push_bench.sh
#   RECORDS=1000000 ROUNDS=3 tools/bench/scale/edit_push_bench.sh
#
# Environment: RECORDS (default 100000), ROUNDS (default 5), BUILD (default
# build), RUN_DIR.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../../.." && pwd)
# shellcheck source=bench_lib.sh
. "$HERE/bench_lib.sh"
RECORDS=${RECORDS:-100000}
ROUNDS=${ROUNDS:-5}
BUILD=${BUILD:-$ROOT/build}
GTMESH=$BUILD/tools/gtmesh
GTMESHCTL=$BUILD/tools/gtmeshctl
RUN_DIR=${RUN_DIR:-$(mktemp -d /tmp/gtmesh-edit.XXXXXX)}
die() { echo "edit_push_bench: $*" >&2; exit 1; }
[ -x "$GTMESH" ] && [ -x "$GTMESHCTL" ] || die "no gtmesh/gtmeshctl in $BUILD/tools (build first)"
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null; rm -rf "$RUN_DIR"; }
trap cleanup EXIT

read -r dc_name _ < <(python3 "$HERE/gen_config.py" --records "$RECORDS" "$RUN_DIR/cfg")
record=dc$((RECORDS * 3 / 10 + 68))
qname=$record.${dc_name#*.}
line=$(grep -n "name: $record, type: A, ttl: 30," "$RUN_DIR/cfg/gtmesh.yaml" | cut -d: -f1)
[ -n "$line" ] || die "no record $record with ttl: 30 to edit"
mkdir -p "$RUN_DIR/push"
start_one_decider "$RUN_DIR/decider.log"
ctl() { "$GTMESHCTL" --decider "127.0.0.1:$mesh_port" --timeout 300s "$@"; }
wait_config_version "$GTMESHCTL" "$mesh_port" 1 "$pid" 900 || die "$(tail -3 "$RUN_DIR/decider.log")"
ttl_of() { # the TTL the decider answers $qname with
  dig +noall +answer +time=1 +tries=1 @127.0.0.1 -p "$dns_port" "$qname" A | awk '$4 == "A" { print $2; exit }'
}
# No agents: it answers (fail-safe) once its readiness bound has passed.
for _ in $(seq 1 60); do
  [ "$(ttl_of)" = 30 ] && break
  sleep 1
done
[ "$(ttl_of)" = 30 ] || die "$qname is not answered with TTL 30"
echo "records $RECORDS; the edit: $record's ttl at line $line; decider VmRSS $(($(kb "$pid" VmRSS) / 1024)) MB"
echo "round  acknowledged  answered"
for r in $(seq 0 "$ROUNDS"); do
  want=$((40 + r))
  sed "${line}s/ttl: 30,/ttl: $want,/" "$RUN_DIR/cfg/gtmesh.yaml" > "$RUN_DIR/push/gtmesh.yaml"
  t0=$(now)
  ctl push "$RUN_DIR/push/gtmesh.yaml" > "$RUN_DIR/push.out" 2>&1 || die "push $r: $(cat "$RUN_DIR/push.out")"
  t1=$(now)
  deadline=$((SECONDS + 300))
  until [ "$(ttl_of)" = "$want" ]; do
    [ $SECONDS -lt $deadline ] || die "round $r: still $(ttl_of)"
    sleep 0.01
  done
  t2=$(now)
  printf '%5d  %10.2f s  %6.2f s%s\n' "$r" "$(echo "$t1 - $t0" | bc)" "$(echo "$t2 - $t0" | bc)" \
    "$([ "$r" = 0 ] && echo "   (another file name than --config's: read in proportion only without relative paths)")"
done
ctl status --json 2>/dev/null | python3 -c '
import json, sys
c = json.load(sys.stdin)["decider"]["config"]
print("decider loads: whole %d, records changed %d; VmRSS then" % (c["loaded_whole"], c["loaded_in_part"]), end=" ")' \
  || echo -n "decider loads: (status unreadable); VmRSS then"
echo "$(($(kb "$pid" VmRSS) / 1024)) MB, VmHWM $(($(kb "$pid" VmHWM) / 1024)) MB"
