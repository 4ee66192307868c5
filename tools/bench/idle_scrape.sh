#!/usr/bin/env bash
# idle_scrape.sh - does a 15 s scrape interval change an idle node's CPU?
# (docs/benchmarks.md, "Metrics"). Starts `gtmesh demo` (decider, responder,
# 3 DCs of agents probing 6 backends, all in one process) on free loopback
# ports, lets it settle, then measures its CPU time (utime+stime from
# /proc/PID/stat) over WINDOW seconds without scraping and over WINDOW
# seconds with a GET /metrics every 15 s, alternating ROUNDS times.
#
#   tools/bench/idle_scrape.sh            # WINDOW=60 ROUNDS=3: ~7 min
# Loopback only; stops only the demo it started.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=${GTMESH_BIN:-$ROOT/build/tools/gtmesh}
WINDOW=${WINDOW:-60}
ROUNDS=${ROUNDS:-3}
work=$(mktemp -d /tmp/gtmesh-idle-scrape.XXXXXX)
"$BIN" demo --dns-port 0 --mesh-port 0 --http 127.0.0.1:0 --data-dir "$work/d" --port-file "$work/ports" \
  > "$work/demo.log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 1 300); do [ -s "$work/ports" ] && break; sleep 0.1; done
http=$(awk '$1 == "http" {print $2}' "$work/ports")
ticks() { awk '{print $14 + $15}' "/proc/$pid/stat"; }
hz=$(getconf CLK_TCK)
sleep 10 # settle: first probe rounds, first snapshot
printf 'window\tscrapes\tcpu_ms\tcpu_pct\n'
for r in $(seq 1 "$ROUNDS"); do
  for mode in idle scraped; do
    t0=$(ticks); n=0; end=$((SECONDS + WINDOW))
    while [ $SECONDS -lt $end ]; do
      if [ $mode = scraped ]; then curl -s -o /dev/null "http://$http/metrics"; n=$((n + 1)); fi
      sleep 15 & wait $! || true
      [ $SECONDS -lt $end ] || break
    done
    t1=$(ticks)
    awk -v m="$mode" -v n="$n" -v d=$((t1 - t0)) -v hz="$hz" -v w="$WINDOW" \
      'BEGIN { printf "%s\t%d\t%d\t%.3f\n", m, n, d * 1000 / hz, d * 100 / hz / w }'
  done
done
