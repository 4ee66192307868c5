#!/usr/bin/env bash
# swarm_bench.sh - live state at scale (issue 11, docs/benchmarks.md "Scale"):
# one decider serving RECORDS records over DCS DCs (gen_config.py, plus a
# record `flip` that answers the DC with the lowest host CPU among those up)
# while agent_swarm runs AGENTS agents over real mesh links, each reporting
# 20 metrics a second. Measures the decider's CPU over the steady window
# (utime+stime from /proc, % of one core), its RSS, and the time from DC 0's
# agents reporting host status down to the responder's answer for `flip`
# changing.
#
#   tools/bench/scale/swarm_bench.sh                         # 1,000 agents, 100 DCs, 100,000 records
#   AGENTS=100 RECORDS=10000 tools/bench/scale/swarm_bench.sh
#
# Knobs: AGENTS [1000]  DCS [100]  RECORDS [100000]  PROFILES [1000]
#        WARM [20 s before the window]  WINDOW [30 s]  GTMESH_BIN  SWARM_BIN
# Loopback only; the decider and the swarm are started and stopped here.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../../.." && pwd)
AGENTS=${AGENTS:-1000}
DCS=${DCS:-100}
RECORDS=${RECORDS:-100000}
PROFILES=${PROFILES:-1000}
WARM=${WARM:-20}
WINDOW=${WINDOW:-30}
GTMESH_BIN=${GTMESH_BIN:-$ROOT/build/tools/gtmesh}
SWARM_BIN=${SWARM_BIN:-$ROOT/build/tools/bench/agent_swarm}
RUN_DIR=$(mktemp -d /tmp/gtmesh-swarm.XXXXXX)
DECIDER_PID=
SWARM_PID=
cleanup() {
  [ -n "$SWARM_PID" ] && kill "$SWARM_PID" 2>/dev/null || true
  [ -n "$DECIDER_PID" ] && kill "$DECIDER_PID" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$RUN_DIR"
}
trap cleanup EXIT
die() { echo "swarm_bench: $*" >&2; exit 1; }
[ -x "$GTMESH_BIN" ] || die "no gtmesh at $GTMESH_BIN (build first)"
[ -x "$SWARM_BIN" ] || die "no agent_swarm at $SWARM_BIN (build first)"
# shellcheck source=bench_lib.sh
. "$HERE/bench_lib.sh"
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

python3 "$HERE/gen_config.py" --records "$RECORDS" --dcs "$DCS" --profiles "$PROFILES" "$RUN_DIR/gen" >/dev/null
awk '{ print } /^    records:$/ && !done {
  print "      - {name: flip, type: A, ttl: 5, dc: {source: host, metric: cpu, criterion: lowest, gate: {source: host, metric: status, criterion: {equals: up}}, answers: {dc000: [10.254.0.1], dc001: [10.254.0.2]}, fail_safe: [192.0.2.250]}}"
  done = 1 }' "$RUN_DIR/gen/gtmesh.yaml" > "$RUN_DIR/config.yaml"
zone=$(awk '/^zones:/ { z = 1 } z && /^  - name: / { print $3; exit }' "$RUN_DIR/config.yaml")
mesh=127.0.0.1:$(free_port)
dns=127.0.0.1:$(free_port)
"$GTMESH_BIN" decider --config "$RUN_DIR/config.yaml" --data-dir "$RUN_DIR/decider" --listen "$mesh" \
  --name decider1 --dns "$dns" --port-file "$RUN_DIR/ports" > "$RUN_DIR/decider.log" 2>&1 &
DECIDER_PID=$!
for _ in $(seq 1 600); do [ -s "$RUN_DIR/ports" ] && break; sleep 0.1; done
[ -s "$RUN_DIR/ports" ] || die "the decider did not start: $(tail -5 "$RUN_DIR/decider.log")"

seconds=$((WARM + WINDOW + 10))
"$SWARM_BIN" --decider "$mesh" --agents "$AGENTS" --dcs "$DCS" --seconds "$seconds" \
  --flip-at $((WARM + WINDOW + 2)) --dns "$dns" --qname "flip.$zone" > "$RUN_DIR/swarm.txt" 2>&1 &
SWARM_PID=$!
for _ in $(seq 1 900); do grep -q links_up "$RUN_DIR/swarm.txt" && break; sleep 0.1; done
grep -q links_up "$RUN_DIR/swarm.txt" || die "the swarm did not connect: $(tail -3 "$RUN_DIR/swarm.txt")"
sleep "$WARM"
t0=$(cpu_ticks "$DECIDER_PID")
sleep "$WINDOW"
t1=$(cpu_ticks "$DECIDER_PID")
hz=$(getconf CLK_TCK)
rss=$(kb "$DECIDER_PID" VmRSS)
wait "$SWARM_PID" || die "the swarm failed: $(tail -3 "$RUN_DIR/swarm.txt")"
SWARM_PID=
echo "agents: $AGENTS over $DCS DCs, 20 metrics a second each; decider serving $RECORDS records"
cat "$RUN_DIR/swarm.txt"
echo "decider CPU over ${WINDOW} s: $(echo "scale=1; 100 * ($t1 - $t0) / $hz / $WINDOW" | bc)% of one core; RSS $((rss / 1024)) MB"
