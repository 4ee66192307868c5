#!/bin/bash
# restart_bench.sh - a decider restarted on its folder (issue 42: "a decider
# restarted on its folder answers from RocksDB within 1.5x gdnsd's
# first-answer time"). One decider starts on the scale bench's config of
# RECORDS records and commits it (version 1); it is killed (-9) and started
# again on the same folder, ROUNDS times. Per restart: seconds from exec to
# the log line "config version N ..., M measurements restored" (the stored
# config loaded and compiled), to "answering DNS", and to the first
# answer of a DC-mode record over UDP. The bench runs no agents: with no
# measurement stored the decider waits its readiness bound (10 s,
# docs/mesh.md "Readiness") before it answers.
#
#   RECORDS=1000000 tools/bench/scale/restart_bench.sh
#
# Environment: RECORDS (default 1000000), ROUNDS (default 2), BUILD (default build).
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../../.." && pwd)
# shellcheck source=bench_lib.sh
. "$HERE/bench_lib.sh"
RECORDS=${RECORDS:-1000000}
ROUNDS=${ROUNDS:-2}
BUILD=${BUILD:-$ROOT/build}
GTMESH=$BUILD/tools/gtmesh
GTMESHCTL=$BUILD/tools/gtmeshctl
RUN_DIR=$(mktemp -d /tmp/gtmesh-restart.XXXXXX)
die() { echo "restart_bench: $*" >&2; exit 1; }
[ -x "$GTMESH" ] && [ -x "$GTMESHCTL" ] || die "no gtmesh/gtmeshctl in $BUILD/tools (build first)"
pid=
cleanup() { [ -n "$pid" ] && kill -9 "$pid" 2>/dev/null && wait "$pid" 2>/dev/null; rm -rf "$RUN_DIR"; }
trap cleanup EXIT

read -r dc_name _ < <(python3 "$HERE/gen_config.py" --records "$RECORDS" "$RUN_DIR/cfg")
start_one_decider "$RUN_DIR/first.log"
wait_config_version "$GTMESHCTL" "$mesh_port" 1 "$pid" 900 || die "$(tail -3 "$RUN_DIR/first.log")"
# Until the store holds the committed config (its snapshot written).
sleep 20
kill -9 "$pid"
wait "$pid" 2>/dev/null
echo "records $RECORDS: a decider killed (-9) and started again on its folder"
for round in $(seq 1 "$ROUNDS"); do
  log=$RUN_DIR/restart$round.log
  t0=$(now)
  start_one_decider "$log"
  restored= answering= answer=
  for _ in $(seq 1 20000); do
    [ -z "$restored" ] && grep -q "measurements restored" "$log" && restored=$(now)
    [ -z "$answering" ] && grep -q "answering DNS" "$log" && answering=$(now)
    answer=$(dig +short +time=1 +tries=1 @127.0.0.1 -p "$dns_port" "$dc_name" A 2>/dev/null | grep -E '^[0-9.]+$' | head -1)
    [ -n "$answer" ] && break
    kill -0 "$pid" 2>/dev/null || die "the restarted decider stopped: $(tail -3 "$log")"
    sleep 0.02
  done
  t=$(now)
  [ -n "$answer" ] || die "no answer"
  # Logged between the last look at the log and the answer:
  [ -z "$answering" ] && grep -q "answering DNS" "$log" && answering=$t
  [ -z "$restored" ] && grep -q "measurements restored" "$log" && restored=$t
  since() { [ -n "$1" ] && awk -v a="$t0" -v b="$1" 'BEGIN { printf "%.2f s", b - a }' || echo "not logged"; }
  echo "restart $round: stored config loaded $(since "$restored"), answering DNS $(since "$answering")," \
    "first answer ($answer) $(since "$t"), VmRSS $(($(kb "$pid" VmRSS) / 1024)) MB"
  kill -9 "$pid"
  wait "$pid" 2>/dev/null
  pid=
done
