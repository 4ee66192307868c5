#!/usr/bin/env bash
# reload_bench.sh - reloading a big config under load (issue 11,
# docs/benchmarks.md "Scale"): `gtmesh serve` answers a config of RECORDS
# records (gen_config.py: 100 DCs, 1,000 profiles) plus a marker record,
# while dnsperf asks it at RATE q/s for the marker, DC-mode and profile names.
# The config file is replaced (atomically) with a new marker and serve gets
# SIGHUP, ROUNDS times. Per round: the time from the signal to the first
# answer carrying the new marker (asked every 10 ms with dig). At the end:
# dnsperf's sent / lost / response codes (anything but NOERROR is a switch
# that was not atomic), serve's RSS and peak RSS.
#
#   tools/bench/scale/reload_bench.sh                       # 100,000 records, 5 rounds
#   RECORDS=10000 ROUNDS=2 tools/bench/scale/reload_bench.sh
#
# Knobs: RECORDS [100000]  ROUNDS [5]  RATE [5000 q/s]  TIMEOUT [60 s per round]
#        GTMESH_BIN [<repo>/build/tools/gtmesh]
# Loopback only; serve and dnsperf are started and stopped by this script,
# dnsperf's run is bounded by time.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../../.." && pwd)
RECORDS=${RECORDS:-100000}
ROUNDS=${ROUNDS:-5}
RATE=${RATE:-5000}
TIMEOUT=${TIMEOUT:-60}
GTMESH_BIN=${GTMESH_BIN:-$ROOT/build/tools/gtmesh}
RUN_DIR=$(mktemp -d /tmp/gtmesh-reload.XXXXXX)
SERVE_PID=
DNSPERF_PID=
cleanup() {
  [ -n "$DNSPERF_PID" ] && kill "$DNSPERF_PID" 2>/dev/null || true
  [ -n "$SERVE_PID" ] && kill "$SERVE_PID" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$RUN_DIR"
}
trap cleanup EXIT
die() { echo "reload_bench: $*" >&2; exit 1; }
[ -x "$GTMESH_BIN" ] || die "no gtmesh at $GTMESH_BIN (build first)"
command -v dnsperf >/dev/null || die "dnsperf missing"
command -v dig >/dev/null || die "dig missing"
# shellcheck source=bench_lib.sh
. "$HERE/bench_lib.sh"

python3 "$HERE/gen_config.py" --records "$RECORDS" --dcs 100 --profiles 1000 "$RUN_DIR/gen" >/dev/null
zone=$(awk '/^zones:/ { z = 1 } z && /^  - name: / { print $3; exit }' "$RUN_DIR/gen/gtmesh.yaml")
make_config() { # round -> config.yaml, replaced atomically
  awk -v round="$1" '{ print } /^    records:$/ && !done {
    printf "      - {name: marker, type: A, ttl: 5, answers: [10.255.%d.%d]}\n", int(round / 256), round % 256
    done = 1 }' "$RUN_DIR/gen/gtmesh.yaml" > "$RUN_DIR/config.yaml.new"
  mv "$RUN_DIR/config.yaml.new" "$RUN_DIR/config.yaml"
}
make_config 0
port=$(free_port)
"$GTMESH_BIN" serve --config "$RUN_DIR/config.yaml" --listen "127.0.0.1:$port" --port-file "$RUN_DIR/ports" \
  > "$RUN_DIR/serve.log" 2>&1 &
SERVE_PID=$!
for _ in $(seq 1 $((TIMEOUT * 10))); do [ -s "$RUN_DIR/ports" ] && break; sleep 0.1; done
[ -s "$RUN_DIR/ports" ] || die "serve did not start: $(tail -3 "$RUN_DIR/serve.log")"
marker() { dig +short +time=1 +tries=1 -p "$port" @127.0.0.1 "marker.$zone" A 2>/dev/null | tr -d '\n'; }
[ "$(marker)" = 10.255.0.0 ] || die "serve does not answer the marker"

last=$((RECORDS / 2 - 1)) # the generator's last DC-mode (dcN) and profile (pN) record
printf 'marker.%s A\ndc7.%s A\np9.%s A\ndc%d.%s A\np%d.%s A\n' "$zone" "$zone" "$zone" "$last" "$zone" "$last" "$zone" \
  > "$RUN_DIR/queries.txt"
load_secs=$((ROUNDS * (TIMEOUT + 5) + 10))
dnsperf -s 127.0.0.1 -p "$port" -d "$RUN_DIR/queries.txt" -Q "$RATE" -l "$load_secs" -c 4 -t 2 \
  > "$RUN_DIR/dnsperf.txt" 2>&1 &
DNSPERF_PID=$!
sleep 1

echo "records: $RECORDS; config $(($(stat -c %s "$RUN_DIR/config.yaml") / 1048576)) MB of YAML; RSS before the first reload $(( $(kb "$SERVE_PID" VmRSS) / 1024 )) MB"
echo "round  SIGHUP -> new marker answered"
for r in $(seq 1 "$ROUNDS"); do
  make_config "$r"
  want="10.255.$((r / 256)).$((r % 256))"
  t0=$(now)
  kill -HUP "$SERVE_PID"
  deadline=$((SECONDS + TIMEOUT))
  until [ "$(marker)" = "$want" ]; do
    [ $SECONDS -lt $deadline ] || die "round $r: still answers '$(marker)'"
    sleep 0.01
  done
  t1=$(now)
  printf '%5d  %.2f s\n' "$r" "$(echo "$t1 - $t0" | bc)"
done

kill -INT "$DNSPERF_PID" 2>/dev/null || true
wait "$DNSPERF_PID" 2>/dev/null || true
DNSPERF_PID=
echo "dnsperf at $RATE q/s during the reloads: $(dnsperf_summary "$RUN_DIR/dnsperf.txt")"
sleep 3 # serve returns the old model's pages 2 s after a reload
echo "serve: RSS 3 s after the last reload $(( $(kb "$SERVE_PID" VmRSS) / 1024 )) MB, peak $(( $(kb "$SERVE_PID" VmHWM) / 1024 )) MB"
grep -c "reloaded" "$RUN_DIR/serve.log" | sed 's/^/reloads logged: /'
