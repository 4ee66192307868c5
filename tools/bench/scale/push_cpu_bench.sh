#!/usr/bin/env bash
# push_cpu_bench.sh - the CPU each process of a cluster spends on a push
# (issue 42, "Changes at size"): tools/cluster.sh's cluster (3 deciders,
# 3 agents) gets its config plus RECORDS DC-mode records like www (the
# records mesh_bench.py --extra-records adds), then ROUNDS pushes that each
# change one record's TTL. Prints per round the acknowledgement and when all
# three responders answer the new TTL, then each process's CPU per push
# (user + system, from /proc/PID/stat), the pushes only.
#
#   RECORDS=100000 ROUNDS=4 tools/bench/scale/push_cpu_bench.sh
#
# Knobs: RECORDS [100000]  ROUNDS [4]  GTMESH_BIN [<repo>/build/tools/gtmesh]
# Loopback only; the cluster is started and stopped by this script.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../../.." && pwd)
RECORDS=${RECORDS:-100000}
ROUNDS=${ROUNDS:-4}
GTMESH_BIN=${GTMESH_BIN:-$ROOT/build/tools/gtmesh}
RUN_DIR=$(mktemp -d /tmp/gtmesh-push-cpu.XXXXXX)
cleanup() {
  GTMESH_BIN=$GTMESH_BIN "$ROOT/tools/cluster.sh" stop "$RUN_DIR/cluster" >/dev/null 2>&1 || true
  rm -rf "$RUN_DIR"
}
trap cleanup EXIT
die() { echo "push_cpu_bench: $*" >&2; exit 1; }
# shellcheck source=bench_lib.sh
. "$HERE/bench_lib.sh"
[ -x "$GTMESH_BIN" ] || die "no gtmesh at $GTMESH_BIN (build first)"
GTMESH_BIN=$GTMESH_BIN "$ROOT/tools/cluster.sh" start "$RUN_DIR/cluster" >/dev/null
# shellcheck disable=SC1091
. "$RUN_DIR/cluster/cluster.env"
python3 - "$RUN_DIR/cluster/cluster.yaml" "$RECORDS" > "$RUN_DIR/base.yaml" <<'PY'
import sys
text = open(sys.argv[1]).read()
n = int(sys.argv[2])
lines = ["      - {name: r%d, type: A, ttl: 5, dc: {source: service, service: web, metric: healthyBackends, "
         "answers: {fra: [10.1.%d.%d], iad: [10.2.%d.%d], sin: [10.3.%d.%d]}}}"
         % (i, i // 250 % 250, i % 250 + 1, i // 250 % 250, i % 250 + 1, i // 250 % 250, i % 250 + 1)
         for i in range(n)]
print(text.replace("    records:\n", "    records:\n" + "\n".join(lines) + "\n", 1), end="")
PY
cp "$RUN_DIR/base.yaml" "$RUN_DIR/push.yaml"
$GTMESHCTL --timeout 300s push "$RUN_DIR/push.yaml" >/dev/null || die "the first push failed"
ttl_of() { # ADDR:PORT -> the TTL r5 is answered with
  dig +noall +answer +time=1 +tries=1 -p "${1##*:}" @"${1%:*}" r5.demo.example A | awk '{ print $2; exit }'
}
deadline=$((SECONDS + 300))
for dns in "$DNS1" "$DNS2" "$DNS3"; do
  until [ "$(ttl_of "$dns")" = 5 ]; do
    [ $SECONDS -lt $deadline ] || die "$dns never answered r5 with TTL 5"
    sleep 0.1
  done
done
pids=$(cat "$RUN_DIR"/cluster/decider*.pid "$RUN_DIR"/cluster/agent-*.pid)
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
declare -A before
for p in $pids; do before[$p]=$(cpu_ticks "$p"); done
echo "records: $RECORDS; round  acknowledged  all 3 responders answer"
for r in $(seq 1 "$ROUNDS"); do
  want=$((10 + r))
  sed "s/      - {name: r5, type: A, ttl: 5,/      - {name: r5, type: A, ttl: $want,/" "$RUN_DIR/base.yaml" > "$RUN_DIR/push.yaml"
  t0=$(now)
  $GTMESHCTL --timeout 300s push "$RUN_DIR/push.yaml" >/dev/null || die "push $r failed"
  t1=$(now)
  deadline=$((SECONDS + 300))
  for dns in "$DNS1" "$DNS2" "$DNS3"; do
    until [ "$(ttl_of "$dns")" = "$want" ]; do
      [ $SECONDS -lt $deadline ] || die "round $r: $dns still answers TTL $(ttl_of "$dns")"
      sleep 0.01
    done
  done
  t2=$(now)
  printf '%5d  %10.2f s  %10.2f s\n' "$r" "$(echo "$t1 - $t0" | bc)" "$(echo "$t2 - $t0" | bc)"
done
hz=$(getconf CLK_TCK)
for f in "$RUN_DIR"/cluster/decider*.pid "$RUN_DIR"/cluster/agent-*.pid; do
  p=$(cat "$f")
  echo "$(basename "$f" .pid): $(( ($(cpu_ticks "$p") - ${before[$p]}) * 1000 / hz / ROUNDS )) ms of CPU per push"
done
