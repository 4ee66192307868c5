#!/usr/bin/env bash
# push_bench.sh - pushing a big config through a running cluster (issue 11,
# docs/benchmarks.md "Scale"): tools/cluster.sh's cluster (3 deciders, each
# with its DNS responder, 3 agents: 6 mesh nodes) gets the cluster config
# plus N generated records pushed ROUNDS times with `gtmeshctl push`, while
# dnsperf asks responder 1 at a steady rate. Each push changes one marker
# record; the figure per round is the time from the start of the push to the
# moment all three responders answer the new marker (every 10 ms by dig).
#
# Reports per round: push acknowledged (s), all responders switched (s), and
# at the end: dnsperf queries sent / lost / non-NOERROR, the wire size of the
# config (zstd, as the mesh sends it), RSS of deciders and agents.
#
#   tools/bench/scale/push_bench.sh                 # 100,000 records, 5 rounds
#   RECORDS=10000 ROUNDS=2 tools/bench/scale/push_bench.sh
#   AGENTS_PER_DC=3 tools/bench/scale/push_bench.sh # 12 mesh nodes: 3 deciders + 9 agents
#   MODE=api tools/bench/scale/push_bench.sh        # each round a PUT of the marker through /api/v1
#
# MODE=api: rounds 1..ROUNDS change the marker with one PUT of
# zones/demo.example/records/marker/A to decider 1's HTTP API (plain mode:
# loopback), not a push of the file (docs/api.md, "A record's change").
#
# Knobs: RECORDS [100000]  ROUNDS [5]  RATE [2000 q/s]  TIMEOUT [60 s per round]
#        AGENTS_PER_DC [1] (tools/cluster.sh: agent instances per DC)
#        GTMESH_BIN [<repo>/build/tools/gtmesh]  RUN_DIR [a new /tmp dir, removed at exit; one given is kept]
# Loopback only; the cluster is started and stopped by this script.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../../.." && pwd)
RECORDS=${RECORDS:-100000}
ROUNDS=${ROUNDS:-5}
RATE=${RATE:-2000}
TIMEOUT=${TIMEOUT:-60}
GTMESH_BIN=${GTMESH_BIN:-$ROOT/build/tools/gtmesh}
OWN_RUN_DIR=0
[ -n "${RUN_DIR:-}" ] || { RUN_DIR=$(mktemp -d /tmp/gtmesh-push.XXXXXX); OWN_RUN_DIR=1; }
CLUSTER=$RUN_DIR/cluster
DNSPERF_PID=
cleanup() {
  [ -n "$DNSPERF_PID" ] && kill "$DNSPERF_PID" 2>/dev/null || true
  GTMESH_BIN=$GTMESH_BIN "$ROOT/tools/cluster.sh" stop "$CLUSTER" >/dev/null 2>&1 || true
  [ "$OWN_RUN_DIR" = 1 ] && rm -rf "$RUN_DIR"
  return 0
}
trap cleanup EXIT
die() { echo "push_bench: $*" >&2; exit 1; }
[ -x "$GTMESH_BIN" ] || die "no gtmesh at $GTMESH_BIN (build first)"
command -v dnsperf >/dev/null || die "dnsperf missing"
command -v zstd >/dev/null || die "zstd missing (apt-get install zstd)"
# shellcheck source=bench_lib.sh
. "$HERE/bench_lib.sh"

mkdir -p "$CLUSTER"
GTMESH_BIN=$GTMESH_BIN "$ROOT/tools/cluster.sh" start "$CLUSTER" >/dev/null
# shellcheck disable=SC1091
. "$CLUSTER/cluster.env"
ctl=($GTMESHCTL)
answers() { # ADDR:PORT NAME -> the A answers, sorted
  dig +short +time=1 +tries=1 -p "${1##*:}" @"${1%:*}" "$2" A 2>/dev/null | sort | tr '\n' ' '
}
# Wait until the cluster has its first config everywhere (www answers).
deadline=$((SECONDS + TIMEOUT))
for dns in "$DNS1" "$DNS2" "$DNS3"; do
  until [ -n "$(answers "$dns" www.demo.example)" ]; do
    [ $SECONDS -lt $deadline ] || die "responder $dns never answered www.demo.example"
    sleep 0.1
  done
done

# The big config: the cluster's own plus RECORDS records in its zone (half
# DC-mode over the cluster's three DCs, half static) and a marker record.
make_config() { # round out
  awk -v n="$RECORDS" -v round="$1" '
    { print }
    /^    records:$/ && !done {
      printf "      - {name: marker, type: A, ttl: 5, answers: [10.255.%d.%d]}\n", int(round / 256), round % 256
      for (i = 0; i < n / 2; i++) {
        printf "      - {name: d%d, type: A, ttl: 30, dc: {source: service, service: web, metric: healthyBackends, answers: {fra: [192.0.2.%d], iad: [198.51.100.%d], sin: [203.0.113.%d]}, fail_safe: [192.0.2.250]}}\n", i, i % 250 + 1, i % 250 + 1, i % 250 + 1
        printf "      - {name: s%d, type: A, ttl: 300, answers: [10.%d.%d.%d]}\n", i, int(i / 65536), int(i / 256) % 256, i % 256
      }
      done = 1
    }' "$CLUSTER/cluster.yaml" > "$2"
}
make_config 0 "$RUN_DIR/push.yaml" # one file name throughout: a push is read against the last
"$GTMESH_BIN" check-config "$RUN_DIR/push.yaml" >/dev/null || die "the generated config does not load"
yaml_bytes=$(stat -c %s "$RUN_DIR/push.yaml")
wire_bytes=$(zstd -3 --check -c -q "$RUN_DIR/push.yaml" | wc -c)

# Round 0 (not timed) puts the big config in place, so every queried name
# exists from here on: an NXDOMAIN or SERVFAIL below is a switch that was not atomic.
"${ctl[@]}" --timeout 60s push "$RUN_DIR/push.yaml" > "$RUN_DIR/push-0.txt" 2>&1 || die "push 0 failed: $(cat "$RUN_DIR/push-0.txt")"
deadline=$((SECONDS + TIMEOUT))
for dns in "$DNS1" "$DNS2" "$DNS3"; do
  until [ "$(answers "$dns" marker.demo.example)" = "10.255.0.0 " ]; do
    [ $SECONDS -lt $deadline ] || die "round 0: $dns never answered the marker"
    sleep 0.05
  done
done

# Steady load on responder 1 for the whole run (bounded by time).
printf 'www.demo.example A\nmarker.demo.example A\nd7.demo.example A\ns9.demo.example A\n' > "$RUN_DIR/queries.txt"
load_secs=$((ROUNDS * (TIMEOUT + 5) + 10))
dnsperf -s "${DNS1%:*}" -p "${DNS1##*:}" -d "$RUN_DIR/queries.txt" -Q "$RATE" -l "$load_secs" -c 4 -t 2 \
  > "$RUN_DIR/dnsperf.txt" 2>&1 &
DNSPERF_PID=$!
sleep 1

echo "mesh nodes: 3 deciders + $((3 * ${AGENTS_PER_DC:-1})) agents"
echo "records: $RECORDS; config $((yaml_bytes / 1024)) KiB of YAML, $((wire_bytes / 1024)) KiB as the mesh sends it (zstd -3)"
MODE=${MODE:-push}
echo "round  ${MODE} acknowledged  all 3 responders answer the new marker"
for r in $(seq 1 "$ROUNDS"); do
  want="10.255.$((r / 256)).$((r % 256)) "
  if [ "$MODE" = api ]; then
    t0=$(now)
    code=$(curl -s -o "$RUN_DIR/put-$r.txt" -w '%{http_code}' -X PUT -H 'Content-Type: application/json' \
      --data "{\"ttl\": 5, \"answers\": [\"${want% }\"]}" "http://$HTTP1/api/v1/zones/demo.example/records/marker/A")
    [ "$code" = 200 ] || die "PUT $r: $code $(cat "$RUN_DIR/put-$r.txt")"
  else
    make_config "$r" "$RUN_DIR/push.yaml"
    t0=$(now)
    "${ctl[@]}" --timeout 60s push "$RUN_DIR/push.yaml" > "$RUN_DIR/push-$r.txt" 2>&1 || die "push $r failed: $(cat "$RUN_DIR/push-$r.txt")"
  fi
  t1=$(now)
  deadline=$((SECONDS + TIMEOUT))
  # Each responder in turn, from the one that switches first (decider 1
  # took the push): when each answers the new marker.
  each=""
  for dns in "$DNS1" "$DNS2" "$DNS3"; do
    until [ "$(answers "$dns" marker.demo.example)" = "$want" ]; do
      [ $SECONDS -lt $deadline ] || die "round $r: $dns still answers '$(answers "$dns" marker.demo.example)'"
      sleep 0.01
    done
    each="$each $(printf '%.2f' "$(echo "$(now) - $t0" | bc)")"
  done
  t2=$(now)
  printf '%5d  %17.2f s  %.2f s   (by responder:%s)\n' "$r" "$(echo "$t1 - $t0" | bc)" "$(echo "$t2 - $t0" | bc)" "$each"
done

kill -INT "$DNSPERF_PID" 2>/dev/null || true
wait "$DNSPERF_PID" 2>/dev/null || true
DNSPERF_PID=
echo "dnsperf on responder 1 at $RATE q/s during the pushes: $(dnsperf_summary "$RUN_DIR/dnsperf.txt")"
for n in 1 2 3; do
  p=$(cat "$CLUSTER/decider$n.pid")
  http_var="HTTP$n"
  # How each config text was loaded: whole, or only the records a change touched.
  loads=$(curl -s "http://${!http_var}/metrics" | awk '/^gtmesh_config_loads_total/ { sub(/.*how="/, ""); sub(/"}/, ""); printf "%s %s, ", $1, $2 }')
  echo "decider$n: RSS $(( $(kb "$p" VmRSS) / 1024 )) MB, peak $(( $(kb "$p" VmHWM) / 1024 )) MB; loads: ${loads%, }"
done
for pidfile in "$CLUSTER"/agent-*.pid; do
  p=$(cat "$pidfile")
  name=$(basename "$pidfile" .pid)
  echo "$name: RSS $(( $(kb "$p" VmRSS) / 1024 )) MB, peak $(( $(kb "$p" VmHWM) / 1024 )) MB"
done
