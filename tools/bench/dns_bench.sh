#!/usr/bin/env bash
# dns_bench.sh - gtmesh's authoritative DNS responder against its peers and
# against the floor, in one run, on one server core (docs/benchmarks.md,
# section "DNS responder"; SPEC section 7).
#
# Variants, each answering the same query file (gslb.bench.test A, as in
# tools/bench/peers/queries/dyn.txt) from the same zone (tools/bench/peers/
# zones/bench.test.zone) on 127.0.0.1:
#   gdnsd          gdnsd 3.8 (Debian), gslb = DYNA weighted!wpool (10/20/30)
#   knot           Knot DNS 3.2 (Debian), gslb = a static A record
#   mmsg           tools/bench/peers/limit/limit_dns.c with recvmmsg/sendmmsg:
#                  the floor (a fixed answer, no zone lookup)
#   plain          the same with recvfrom/sendto (optional: VARIANTS)
#   gtmesh-dc      gtmesh serve, gslb = DC-mode record (3 DCs gated by host
#                  status, lowest CPU wins, weighted_random 10/20/30 inside)
#   gtmesh-profile gtmesh serve, gslb = profile record (method weighted,
#                  three external endpoints, weights 10/20/30)
#   gtmesh-dc-100k gtmesh-dc with 100,000 more names in the zone (50,000
#                  DC-mode records like gslb, 50,000 static ones): the same
#                  query, so its CPU per query beside gtmesh-dc's shows what
#                  the size of the zone costs a lookup (optional: VARIANTS)
#   gtmesh-dc-100k-spread  the same zone, each query for another of the
#                  50,000 DC-mode names in random order (cache misses
#                  included: the worst case for a big table; optional)
#   gtmesh-cookie  gtmesh-dc with every query carrying a DNS Cookie (dnsperf
#                  -E 10:CLIENT-COOKIE, RFC 7873): each answer makes a fresh
#                  RFC 9018 server cookie (SipHash-2-4), the costlier case;
#                  compare its CPU per query with gtmesh-dc (optional: VARIANTS)
#   gtmesh-signed  gtmesh-dc with the zone signed (dnssec:, ECDSA P-256, a key
#                  made by gtmeshctl dnssec keygen) and every query DO=1
#                  (dnsperf -D): an RRSIG in every answer, from the signature
#                  cache after the first; compare its CPU per query with
#                  gtmesh-dc (docs/dnssec.md; optional: VARIANTS)
#   pdns-signed    PowerDNS Authoritative 4.7 (Debian pdns-server +
#                  pdns-backend-bind) with the same zone signed online
#                  (pdnsutil secure-zone: ECDSA P-256) and gslb as a LUA
#                  record, pickwrandom 10/20/30 (enable-lua-records=yes;
#                  its default packet cache on); queries DO=1 (the anchor
#                  for gtmesh-signed; optional: VARIANTS)
#   gtmesh-dnstap  gtmesh-dc with dnstap logging every query and response
#                  (--dnstap unix:) to fstrm_capture (writing to /dev/null,
#                  pinned to the client CPU): its CPU per query, the writer
#                  thread's included, beside gtmesh-dc's (optional: VARIANTS)
#   gtmesh-dnstap-sampled  the same with `dnstap: {sample: 100}` in the config
#   knot-dnstap    knot with mod-dnstap logging every query and response to
#                  the same kind of receiver: the anchor for gtmesh-dnstap
#                  (Debian knot-module-dnstap; optional: VARIANTS)
#   gtmesh-metrics gtmesh-dc with --http and a /metrics scrape every second
#                  for as long as it runs (docs/metrics.md): its CPU per query,
#                  the scrapes' included, beside gtmesh-dc's (optional: VARIANTS)
# Every server runs with one UDP thread, pinned to CPU $SERVER_CPU at nice
# $BENCH_NICE; dnsperf is pinned to CPU $CLIENT_CPU. Rounds are interleaved
# (gdnsd, knot, mmsg, gtmesh-dc, gtmesh-profile, gdnsd, ...) so that drift of
# the VM hits every variant alike. dnsperf saturates its own core first on a
# 2-core machine, so the fair figure is the server's CPU time per answered
# query (utime+stime of all its threads from /proc over the load window).
#
# Run as root (apt-get for gdnsd/knot if missing, nice -20):
#   sudo tools/bench/dns_bench.sh                 # ~6 min on a quiet machine
#   sudo RATE=100000 tools/bench/dns_bench.sh     # + a pass at a fixed offered load
#   DURATION=4 REPEATS=1 WARMUP=1 tools/bench/dns_bench.sh   # smoke run
#
# Knobs (environment; defaults in brackets):
#   DURATION [15]  REPEATS [3]  WARMUP [3]    seconds / count per measurement
#   CLIENTS [10]  OUTSTANDING [100]  DNSPERF_TIMEOUT [1]   dnsperf -c / -q / -t
#   RATE [0]       >0: second pass at dnsperf -Q RATE (same offered load for all)
#   VARIANTS ["gdnsd knot mmsg gtmesh-dc gtmesh-profile"]  BATCH [32]
#   BIG_NAMES [100000]  names the gtmesh-dc-100k variants add to the zone (half
#                  DC-mode, half static; 1000000 for issue 42's size; the
#                  spread variant asks each of the DC-mode half in turn)
#   GTMESH_BIN [<repo>/build/tools/gtmesh]  GTMESH_ARGS [""] extra serve options
#   SERVER_CPU [0]  CLIENT_CPU [1]  BENCH_NICE [-20]
#   QUIET_MAX [5]  QUIET_WAIT [120]  NOISE_MAX [10]  NOISE_RETRIES [2]
#   SHARED_BENCH [<repo>/tools/bench/peers]  NO_INSTALL [0]
#   RUN_DIR [/tmp/gtmesh-dns-bench] (scratch, removed at exit)
#   RESULTS_DIR [<repo>/tools/bench/results/dns]
# Loopback only; every load run is bounded (dnsperf -l); only processes this
# script started are stopped, by PID.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
DURATION=${DURATION:-15}
BIG_NAMES=${BIG_NAMES:-100000}
REPEATS=${REPEATS:-3}
WARMUP=${WARMUP:-3}
CLIENTS=${CLIENTS:-10}
OUTSTANDING=${OUTSTANDING:-100}
DNSPERF_TIMEOUT=${DNSPERF_TIMEOUT:-1}
RATE=${RATE:-0}
VARIANTS=${VARIANTS:-"gdnsd knot mmsg gtmesh-dc gtmesh-profile"}
BATCH=${BATCH:-32}
GTMESH_BIN=${GTMESH_BIN:-$ROOT/build/tools/gtmesh}
GTMESH_ARGS=${GTMESH_ARGS:-}
SERVER_CPU=${SERVER_CPU:-0}
CLIENT_CPU=${CLIENT_CPU:-1}
BENCH_NICE=${BENCH_NICE:--20}
QUIET_MAX=${QUIET_MAX:-5}
QUIET_WAIT=${QUIET_WAIT:-120}
NOISE_MAX=${NOISE_MAX:-10}
NOISE_RETRIES=${NOISE_RETRIES:-2}
SHARED_BENCH=${SHARED_BENCH:-$HERE/peers}
NO_INSTALL=${NO_INSTALL:-0}
RUN_DIR=${RUN_DIR:-/tmp/gtmesh-dns-bench}
RESULTS_DIR=${RESULTS_DIR:-$ROOT/tools/bench/results/dns}
ADDR=127.0.0.1          # loopback only
ZONE=bench.test
QNAME=gslb.bench.test

declare -A PORT=([gdnsd]=15331 [knot]=15332 [mmsg]=15333 [plain]=15334 [gtmesh-dc]=15335 [gtmesh-profile]=15336
                 [gtmesh-cookie]=15337 [gtmesh-metrics]=15338 [gtmesh-dc-100k]=15339
                 [gtmesh-dc-100k-spread]=15340 [gtmesh-signed]=15341 [pdns-signed]=15342
                 [gtmesh-dnstap]=15343 [gtmesh-dnstap-sampled]=15344 [knot-dnstap]=15345)
METRICS_HTTP_PORT=15438
declare -A KIND=([gdnsd]="DYNA weighted" [knot]="static A" [mmsg]="floor" [plain]="floor, no batching"
                 [gtmesh-dc]="DC-mode" [gtmesh-profile]="profile (weighted)" [gtmesh-cookie]="DC-mode + DNS Cookies"
                 [gtmesh-metrics]="DC-mode + /metrics scraped every 1 s"
                 [gtmesh-dc-100k]="DC-mode, $BIG_NAMES more names in the zone"
                 [gtmesh-dc-100k-spread]="DC-mode, $BIG_NAMES more names, queries over $((BIG_NAMES / 2)) names"
                 [gtmesh-signed]="DC-mode, signed (DNSSEC, DO=1)"
                 [pdns-signed]="LUA pickwrandom, signed online (DO=1)"
                 [gtmesh-dnstap]="DC-mode + dnstap of every query and response"
                 [gtmesh-dnstap-sampled]="DC-mode + dnstap, sample 1 in 100"
                 [knot-dnstap]="static A + mod-dnstap of every query and response")
# Extra dnsperf arguments per variant.
# Query file per variant (default queries.txt: one name).
declare -A QUERY_FILE=([gtmesh-dc-100k-spread]=queries-50k.txt)
declare -A DNSPERF_ARGS=([gtmesh-cookie]="-e -E 10:2464c4abcf10c957" [gtmesh-signed]="-D" [pdns-signed]="-D")
declare -A SPID=()      # variant -> PID of the server we started
CLK_TCK=$(getconf CLK_TCK)
CREATED_POLICY=0

log() { printf '[%s] %s\n' "$(date +%T)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

# ---------------------------------------------------------------- cleanup
pid_tree() { # PID and all its descendants
  local p=$1 c
  [ -d "/proc/$p" ] || return 0
  echo "$p"
  for c in $(cat /proc/"$p"/task/*/children 2>/dev/null); do pid_tree "$c"; done
}

stop_pid() { # one server we started, by PID (and its children, by PID)
  local pid=$1 kids i
  kill -0 "$pid" 2>/dev/null || { wait "$pid" 2>/dev/null || true; return 0; }
  kids=$(pid_tree "$pid" | tail -n +2)
  kill -TERM "$pid" 2>/dev/null || true
  for i in $(seq 1 75); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
  if kill -0 "$pid" 2>/dev/null; then log "PID $pid ignored SIGTERM, sending SIGKILL"; kill -KILL "$pid" 2>/dev/null || true; fi
  wait "$pid" 2>/dev/null || true
  for i in $kids; do kill -0 "$i" 2>/dev/null && kill -KILL "$i" 2>/dev/null || true; done
  return 0
}

stop_dnsperf() { # a dnsperf of ours still running (interrupted run), by PID file
  local pid
  [ -f "$RUN_DIR/dnsperf.pid" ] || return 0
  pid=$(cat "$RUN_DIR/dnsperf.pid")
  if [ -n "$pid" ] && [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = dnsperf ] \
     && tr '\0' ' ' < "/proc/$pid/cmdline" | grep -qF -- "$RUN_DIR/"; then
    kill -TERM "$pid" 2>/dev/null || true
  fi
  rm -f "$RUN_DIR/dnsperf.pid"
}

stop_servers() {
  local v
  for v in "${!SPID[@]}"; do stop_pid "${SPID[$v]}"; unset "SPID[$v]"; done
}

cleanup() {
  local rc=$?
  stop_dnsperf || true
  stop_servers || true
  if [ "$CREATED_POLICY" = 1 ]; then rm -f /usr/sbin/policy-rc.d; fi
  if [ -d "$RUN_DIR" ] && [ -z "${KEEP_RUN_DIR:-}" ]; then rm -rf -- "$RUN_DIR"; fi
  exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

kill_stale() { # servers left by an earlier, interrupted run of this script
  local pf pid
  [ -d "$RUN_DIR" ] || return 0
  stop_dnsperf
  for pf in "$RUN_DIR"/*/server.pid; do
    [ -f "$pf" ] || continue
    pid=$(cat "$pf")
    if [ -n "$pid" ] && [ -r "/proc/$pid/cmdline" ] && tr '\0' ' ' < "/proc/$pid/cmdline" | grep -qF -- "$RUN_DIR"; then
      log "stopping stale server PID $pid from an earlier run"
      stop_pid "$pid"
    fi
  done
  rm -rf -- "$RUN_DIR"
}

# ---------------------------------------------------------------- install
ensure_packages() {
  local p missing=() want=(dnsperf knot-dnsutils gcc util-linux iproute2)
  [[ " $VARIANTS " == *" gdnsd "* ]] && want+=(gdnsd)
  [[ " $VARIANTS " == *" knot "* ]] && want+=(knot)
  [[ " $VARIANTS " == *" knot-dnstap "* ]] && want+=(knot knot-module-dnstap)
  [[ " $VARIANTS " == *"dnstap"* ]] && want+=(fstrm-bin)
  [[ " $VARIANTS " == *" pdns-signed "* ]] && want+=(pdns-server pdns-backend-bind)
  for p in "${want[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  [ "$NO_INSTALL" = 1 ] && die "missing packages: ${missing[*]} (NO_INSTALL=1)"
  [ "$(id -u)" = 0 ] || die "missing packages: ${missing[*]}; run as root to install them"
  # Keep the packages' own services (which would listen on port 53) from starting.
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d; chmod 755 /usr/sbin/policy-rc.d; CREATED_POLICY=1
  fi
  log "installing: ${missing[*]}"
  DEBIAN_FRONTEND=noninteractive apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" >&2
  if [ "$CREATED_POLICY" = 1 ]; then rm -f /usr/sbin/policy-rc.d; CREATED_POLICY=0; fi
}

# ---------------------------------------------------------------- configs
render() { sed -e "s#__RUN__#$3#g" -e "s#__PORT__#$4#g" "$1" > "$2"; }

# The static part of bench.test as gtmesh records (same data as the zone file).
gtmesh_zone_head() {
  cat <<'EOF'
zones:
  - name: bench.test
    soa: {primary: ns1.bench.test., admin: hostmaster.bench.test., serial: 2024010101, refresh: 3600,
          retry: 900, expire: 604800, minimum: 300, ttl: 300}
    ns: [ns1.bench.test., ns2.bench.test.]
    ns_ttl: 300
    records:
      - {name: bench.test., type: A, ttl: 300, answers: [192.0.2.10]}
      - {name: bench.test., type: MX, ttl: 300, answers: ["10 mail.bench.test."]}
      - {name: ns1, type: A, ttl: 300, answers: [192.0.2.53]}
      - {name: ns2, type: A, ttl: 300, answers: [192.0.2.54]}
      - {name: www, type: A, ttl: 300, answers: [192.0.2.11]}
      - {name: www, type: AAAA, ttl: 300, answers: ["2001:db8::11"]}
      - {name: mail, type: A, ttl: 300, answers: [192.0.2.12]}
      - {name: api, type: A, ttl: 300, answers: [192.0.2.13, 192.0.2.14]}
      - {name: cdn, type: A, ttl: 300, answers: [192.0.2.15]}
EOF
}

write_gtmesh_configs() { # dir
  local d=$1
  {
    echo "datacenters: [{name: a}, {name: b}, {name: c}]"
    gtmesh_zone_head
    cat <<'EOF'
      # DC mode: DCs whose host status is up, the lowest CPU wins, weighted
      # random inside it (the same 10/20/30 pool as gdnsd's wpool).
      - name: gslb
        type: A
        ttl: 30
        dc:
          source: host
          metric: cpu
          criterion: lowest
          gate: {source: host, metric: status, criterion: {equals: up}}
          pick_dc_count: 1
          balance: weighted_random
          answers:
            a: [{address: 192.0.2.1, weight: 10}, {address: 192.0.2.2, weight: 20}, {address: 192.0.2.3, weight: 30}]
            b: [198.51.100.1]
            c: [203.0.113.1]
          fail_safe: [192.0.2.250]
EOF
  } > "$d/gtmesh-dc.yaml"
  {
    echo "datacenters: [{name: a}]"
    gtmesh_zone_head
    cat <<'EOF'
      # Profile mode: the weighted method over three external endpoints.
      - {name: gslb, type: A, ttl: 30, profile: wpool}
profiles:
  - name: wpool
    method: weighted
    endpoints:
      - {name: a, kind: external, target: 192.0.2.1, weight: 10}
      - {name: b, kind: external, target: 192.0.2.2, weight: 20}
      - {name: c, kind: external, target: 192.0.2.3, weight: 30}
EOF
  } > "$d/gtmesh-profile.yaml"
  cat > "$d/state.yaml" <<'EOF'
# All three DCs up; a has the lowest CPU.
hosts:
  a: {status: up, cpu: 20}
  b: {status: up, cpu: 40}
  c: {status: up, cpu: 60}
EOF
  "$GTMESH_BIN" check-config "$d/gtmesh-dc.yaml" >&2 || die "gtmesh-dc.yaml does not load"
  "$GTMESH_BIN" check-config "$d/gtmesh-profile.yaml" >&2 || die "gtmesh-profile.yaml does not load"
}

prepare() { # variant dir port
  local v=$1 d=$2 port=$3
  mkdir -p "$d"
  case $v in
    gdnsd)
      mkdir -p "$d/zones" "$d/run" "$d/state"
      render "$SHARED_BENCH/conf/gdnsd/config" "$d/config" "$d" "$port"
      cat "$SHARED_BENCH/zones/bench.test.zone" "$SHARED_BENCH/zones/gdnsd-dyn.rr" > "$d/zones/$ZONE"
      gdnsd -c "$d" checkconf > "$d/checkconf.log" 2>&1 || { cat "$d/checkconf.log" >&2; die "gdnsd checkconf failed"; } ;;
    knot)
      mkdir -p "$d/zones" "$d/run" "$d/db"
      render "$SHARED_BENCH/conf/knot/knot.conf" "$d/knot.conf" "$d" "$port"
      { cat "$SHARED_BENCH/zones/bench.test.zone"; echo "gslb    30 IN A 192.0.2.1"; } > "$d/zones/bench.test.zone"
      knotc -c "$d/knot.conf" conf-check >&2 || die "knot conf-check failed" ;;
    knot-dnstap)
      mkdir -p "$d/zones" "$d/run" "$d/db"
      render "$SHARED_BENCH/conf/knot/knot.conf" "$d/knot.conf" "$d" "$port"
      # mod-dnstap, every query and response, for every zone of the template.
      sed -i "s|^template:|mod-dnstap:\n  - id: tap\n    sink: \"unix:$d/tap.sock\"\n    log-queries: on\n    log-responses: on\n\ntemplate:|; s|^    journal-content: none|    journal-content: none\n    global-module: mod-dnstap/tap|" "$d/knot.conf"
      { cat "$SHARED_BENCH/zones/bench.test.zone"; echo "gslb    30 IN A 192.0.2.1"; } > "$d/zones/bench.test.zone"
      knotc -c "$d/knot.conf" conf-check >&2 || die "knot-dnstap conf-check failed" ;;
    gtmesh-dc|gtmesh-profile|gtmesh-cookie|gtmesh-metrics|gtmesh-dnstap)
      write_gtmesh_configs "$d" ;;
    gtmesh-dnstap-sampled)
      write_gtmesh_configs "$d"
      { cat "$d/gtmesh-dc.yaml"; echo "dnstap: {sink: unix:$d/tap.sock, sample: 100}"; } > "$d/gtmesh-sampled.yaml"
      "$GTMESH_BIN" check-config "$d/gtmesh-sampled.yaml" >&2 || die "gtmesh-sampled.yaml does not load" ;;
    pdns-signed)
      mkdir -p "$d"
      { cat "$SHARED_BENCH/zones/bench.test.zone"
        echo "gslb    30 IN LUA A \"pickwrandom({{10,'192.0.2.1'},{20,'192.0.2.2'},{30,'192.0.2.3'}})\""; } > "$d/$ZONE.zone"
      echo "zone \"$ZONE\" { type master; file \"$d/$ZONE.zone\"; };" > "$d/named.conf"
      printf '%s\n' launch=bind "bind-config=$d/named.conf" "bind-dnssec-db=$d/dnssec.db" enable-lua-records=yes \
        "local-address=$ADDR" "local-port=$port" "socket-dir=$d" guardian=no daemon=no disable-syslog=yes \
        loglevel=3 distributor-threads=1 receiver-threads=1 webserver=no primary=no > "$d/pdns.conf"
      pdnsutil --config-dir="$d" create-bind-db "$d/dnssec.db" >&2 || die "pdnsutil create-bind-db failed"
      pdnsutil --config-dir="$d" secure-zone "$ZONE" >&2 || die "pdnsutil secure-zone failed" ;;
    gtmesh-signed)
      write_gtmesh_configs "$d"
      rm -rf "$d/keys"
      "$(dirname "$GTMESH_BIN")/gtmeshctl" dnssec keygen bench.test --dir "$d/keys" >&2 || die "dnssec keygen failed"
      sed "s|^  - name: bench.test\$|  - name: bench.test\n    dnssec: {key: $(ls "$d"/keys/*.pem)}|" "$d/gtmesh-dc.yaml" \
        > "$d/gtmesh-signed.yaml"
      "$GTMESH_BIN" check-config "$d/gtmesh-signed.yaml" >&2 || die "gtmesh-signed.yaml does not load" ;;
    gtmesh-dc-100k|gtmesh-dc-100k-spread)
      write_gtmesh_configs "$d"
      { cat "$d/gtmesh-dc.yaml"
        awk -v n=$((BIG_NAMES / 2)) 'BEGIN { for (i = 0; i < n; i++) {
          printf "      - {name: d%d, type: A, ttl: 30, dc: {source: host, metric: cpu, criterion: lowest, gate: {source: host, metric: status, criterion: {equals: up}}, balance: weighted_random, answers: {a: [192.0.2.%d], b: [198.51.100.%d], c: [203.0.113.%d]}, fail_safe: [192.0.2.250]}}\n", i, i % 250 + 1, i % 250 + 1, i % 250 + 1
          printf "      - {name: s%d, type: A, ttl: 300, answers: [10.%d.%d.%d]}\n", i, int(i / 65536), int(i / 256) % 256, i % 256 } }'
      } > "$d/gtmesh-dc-100k.yaml"
      "$GTMESH_BIN" check-config "$d/gtmesh-dc-100k.yaml" >&2 || die "gtmesh-dc-100k.yaml does not load"
      awk -v m=$((BIG_NAMES / 2)) 'BEGIN { srand(7); for (i = 0; i < m; i++) n[i] = i
        for (i = m - 1; i > 0; i--) { j = int(rand() * (i + 1)); t = n[i]; n[i] = n[j]; n[j] = t }
        for (i = 0; i < m; i++) printf "d%d.bench.test A\n", n[i] }' > "$RUN_DIR/queries-50k.txt" ;;
  esac
}

server_cmd() { # variant dir port
  case $1 in
    gdnsd) echo "gdnsd -c $2 start" ;;
    knot|knot-dnstap) echo "knotd -c $2/knot.conf" ;;
    gtmesh-dnstap) echo "$GTMESH_BIN serve --config $2/gtmesh-dc.yaml --state $2/state.yaml --listen $ADDR:$3 --udp-threads 1 --dnstap unix:$2/tap.sock $GTMESH_ARGS" ;;
    gtmesh-dnstap-sampled) echo "$GTMESH_BIN serve --config $2/gtmesh-sampled.yaml --state $2/state.yaml --listen $ADDR:$3 --udp-threads 1 $GTMESH_ARGS" ;;
    pdns-signed) echo "pdns_server --config-dir=$2" ;;
    plain) echo "$RUN_DIR/bin/limit-plain $3" ;;
    mmsg) echo "$RUN_DIR/bin/limit-mmsg $3 $BATCH" ;;
    gtmesh-dc|gtmesh-cookie) echo "$GTMESH_BIN serve --config $2/gtmesh-dc.yaml --state $2/state.yaml --listen $ADDR:$3 --udp-threads 1 $GTMESH_ARGS" ;;
    gtmesh-dc-100k|gtmesh-dc-100k-spread) echo "$GTMESH_BIN serve --config $2/gtmesh-dc-100k.yaml --state $2/state.yaml --listen $ADDR:$3 --udp-threads 1 $GTMESH_ARGS" ;;
    gtmesh-signed) echo "$GTMESH_BIN serve --config $2/gtmesh-signed.yaml --state $2/state.yaml --listen $ADDR:$3 --udp-threads 1 $GTMESH_ARGS" ;;
    gtmesh-profile) echo "$GTMESH_BIN serve --config $2/gtmesh-profile.yaml --listen $ADDR:$3 --udp-threads 1 $GTMESH_ARGS" ;;
    gtmesh-metrics) echo "$GTMESH_BIN serve --config $2/gtmesh-dc.yaml --state $2/state.yaml --listen $ADDR:$3 --udp-threads 1 --http $ADDR:$METRICS_HTTP_PORT $GTMESH_ARGS" ;;
    *) die "unknown variant '$1'" ;;
  esac
}

port_busy() { ss -Hlnu "sport = :$1" 2>/dev/null | grep -q . || ss -Hlnt "sport = :$1" 2>/dev/null | grep -q .; }

start_server() { # variant
  local v=$1 d="$RUN_DIR/$1" port=${PORT[$1]} i pid
  port_busy "$port" && die "port $port already in use on this machine; free it first"
  prepare "$v" "$d" "$port"
  if [[ $v == *dnstap* ]]; then
    # The receiver first (Knot and gtmesh connect to it), on the client's CPU;
    # what it receives goes to /dev/null. Stopped with the servers, by PID.
    taskset -c "$CLIENT_CPU" fstrm_capture -t protobuf:dnstap.Dnstap -u "$d/tap.sock" -w /dev/null \
      > "$d/receiver.log" 2>&1 &
    SPID[$v-receiver]=$!
    for i in $(seq 1 50); do [ -S "$d/tap.sock" ] && break; sleep 0.1; done
    [ -S "$d/tap.sock" ] || die "fstrm_capture did not listen on $d/tap.sock"
  fi
  # shellcheck disable=SC2046
  nice -n "$BENCH_NICE" taskset -c "$SERVER_CPU" $(server_cmd "$v" "$d" "$port") > "$d/server.log" 2>&1 &
  pid=$!
  SPID[$v]=$pid
  echo "$pid" > "$d/server.pid"
  for i in $(seq 1 300); do
    kill -0 "$pid" 2>/dev/null || { tail -20 "$d/server.log" >&2; die "$v exited during startup"; }
    if kdig @"$ADDR" -p "$port" +time=1 +retry=0 "$QNAME" A 2>/dev/null | grep -q 'status: NOERROR'; then
      [ "$v" = gtmesh-metrics ] && start_scraper "$pid"
      return 0
    fi
    sleep 0.2
  done
  tail -20 "$d/server.log" >&2; die "$v did not answer on $ADDR:$port within 60 s"
}

# A Prometheus-like scraper of gtmesh-metrics: one GET /metrics per second
# while that server (PID) lives, on the dnsperf CPU; bounded by the server's life.
start_scraper() { # server-pid
  local server=$1
  taskset -c "$CLIENT_CPU" bash -c "while kill -0 $server 2>/dev/null; do
      curl -s -o /dev/null -w '%{http_code} %{size_download}\\n' --max-time 2 \\
        http://$ADDR:$METRICS_HTTP_PORT/metrics >> $RUN_DIR/scrapes.txt; sleep 1; done" &
  SPID[scraper]=$!
}

verify() { # variant -> one line; fails unless QNAME A gives NOERROR, AA, 1 answer
  local v=$1 port=${PORT[$1]} out st an flags sz dist aff
  out=$(kdig @"$ADDR" -p "$port" +time=1 +retry=0 "$QNAME" A 2>&1 || true)
  st=$(sed -n 's/.*status: \([A-Z]*\).*/\1/p' <<<"$out" | head -1)
  an=$(sed -n 's/.*ANSWER: \([0-9]*\).*/\1/p' <<<"$out" | head -1)
  flags=$(sed -n 's/^;; Flags: \([a-z ]*\);.*/\1/p' <<<"$out" | head -1)
  sz=$(sed -n 's/^;; Received \([0-9]*\) B.*/\1/p' <<<"$out" | head -1)
  [ "$st" = NOERROR ] && [ "${an:-0}" = 1 ] && grep -qw aa <<<"$flags" || die "$v: $QNAME A -> $st, $an answers, flags '$flags'"
  dist=$(kdig @"$ADDR" -p "$port" +time=1 +retry=0 +short $(for _ in $(seq 300); do printf '%s A ' "$QNAME"; done) 2>/dev/null \
         | sort | uniq -c | awk '{printf "%s%s=%s", (NR>1?" ":""), $2, $1}')
  aff=$(for p in $(pid_tree "${SPID[$v]}"); do cat /proc/"$p"/task/*/status; done | awk '/Cpus_allowed_list/{print $2}' | sort -u | tr '\n' ' ')
  [ "$aff" = "$SERVER_CPU " ] || die "$v: threads allowed on CPUs '$aff', expected $SERVER_CPU"
  if [ "$v" = gtmesh-signed ] || [ "$v" = pdns-signed ]; then
    kdig @"$ADDR" -p "$port" +time=1 +retry=0 +dnssec "$QNAME" A 2>/dev/null | grep -q 'RRSIG.*A 13 3 30' \
      || die "$v: a DO=1 query got no RRSIG"
    sz="$sz (DO=1: $(kdig @"$ADDR" -p "$port" +time=1 +retry=0 +dnssec "$QNAME" A 2>/dev/null \
      | sed -n 's/^;; Received \([0-9]*\) B.*/\1/p') B with its RRSIG)"
  fi
  echo "$v: $QNAME A -> $st, flags '$flags', $an answer, response $sz B, threads on CPU $SERVER_CPU; 300 queries: $dist"
}

# ---------------------------------------------------------------- measuring
# (the method of the workplace's shared peer bench, run_peers.sh and limit/run_limit.sh)
SELF_PGRP=$(awk '{i=index($0,") "); split(substr($0,i+2),f," "); print f[3]}' /proc/$$/stat)
SRV_PIDS=" "

# split_ticks DNSPERF_PID -> "server dnsperf server_utime server_stime other" CPU ticks
split_ticks() {
  cat /proc/[0-9]*/stat 2>/dev/null | awk -v srv="$SRV_PIDS" -v dp="$1" -v self="$SELF_PGRP" '{
    i=index($0,") "); split(substr($0,i+2),f," ")
    pid=substr($0,1,index($0," ")-1); t=f[12]+f[13]+f[14]+f[15]
    if (index(srv, " "pid" ")) { s+=t; su+=f[12]+f[14]; ss+=f[13]+f[15] }
    else if (pid==dp) d+=t
    else if (pid!=2 && f[2]!=2 && f[3]!=self) o+=t
  } END { printf "%d %d %d %d %d", s, d, su, ss, o }'
}

# snapshot DNSPERF_PID -> time_ns srv dnsperf srv_user srv_sys other cpu0busy cpu0tot cpu1busy cpu1tot rcvbuf_errors
snapshot() {
  printf '%s %s ' "$(date +%s%N)" "$(split_ticks "$1")"
  awk -v a="cpu$SERVER_CPU" -v b="cpu$CLIENT_CPU" '
    $1==a||$1==b { busy=$2+$3+$4+$7+$8+$9; tot=busy+$5+$6; v[$1]=busy" "tot }
    END { printf "%s %s ", v[a], v[b] }' /proc/stat
  awk '/^Udp:/{n++; if(n==1){for(i=1;i<=NF;i++) if($i=="RcvbufErrors") c=i} else {print $c; exit}}' /proc/net/snmp
}

other_load() {
  local a b t0 t1
  t0=$(date +%s%N); a=$(split_ticks 0); sleep 1
  t1=$(date +%s%N); b=$(split_ticks 0)
  awk -v a="${a##* }" -v b="${b##* }" -v t="$((t1-t0))" -v hz="$CLK_TCK" 'BEGIN{printf "%.0f", 100*(b-a)/hz/(t/1e9)}'
}

wait_quiet() {
  local waited=0 l
  while :; do
    l=$(other_load)
    [ "$l" -le "$QUIET_MAX" ] && return 0
    if [ "$waited" -ge "$QUIET_WAIT" ]; then log "other processes still use ${l}% of a core after ${waited}s; measuring anyway"; return 0; fi
    [ "$waited" = 0 ] && log "other processes use ${l}% of a core; waiting (up to ${QUIET_WAIT}s) for quiet"
    sleep 2; waited=$((waited+3))
  done
}

# run_dnsperf variant seconds outfile [extra dnsperf args]
# -> "qps lat_ms lost sent srv_cpu% dnsperf_cpu% cpu0_busy% cpu1_busy% rcvbuf_drops srv_user% srv_sys% other_cpu%"
run_dnsperf() {
  local v=$1 dur=$2 out=$3 dp a b
  shift 3
  SRV_PIDS=" $(pid_tree "${SPID[$v]}" | tr '\n' ' ') "
  nice -n "$BENCH_NICE" taskset -c "$CLIENT_CPU" dnsperf -s "$ADDR" -p "${PORT[$v]}" -d "$RUN_DIR/${QUERY_FILE[$v]:-queries.txt}" -l "$dur" \
    -c "$CLIENTS" -q "$OUTSTANDING" -t "$DNSPERF_TIMEOUT" -O suppress=timeouts,congestion ${DNSPERF_ARGS[$v]:-} "$@" \
    > "$out" 2>&1 &
  dp=$!
  echo "$dp" > "$RUN_DIR/dnsperf.pid"
  sleep 1; a=$(snapshot "$dp")
  sleep $((dur > 3 ? dur - 2 : 1)); b=$(snapshot "$dp")
  wait "$dp" || { tail -5 "$out" >&2; die "dnsperf failed (see $out)"; }
  rm -f "$RUN_DIR/dnsperf.pid"
  awk -v A="$a" -v B="$b" -v hz="$CLK_TCK" '
    /Queries sent:/        { sent=$3 }
    /Queries lost:/        { lost=$3 }
    /Queries per second:/  { qps=$4 }
    /Average Latency \(s\):/ { lat=$4*1000 }
    END {
      split(A,x," "); split(B,y," ")
      s=(y[1]-x[1])/1e9
      printf "%.0f %.3f %d %d %.1f %.1f %.1f %.1f %d %.1f %.1f %.0f\n", qps, lat, lost, sent,
        100*(y[2]-x[2])/hz/s, 100*(y[3]-x[3])/hz/s,
        100*(y[7]-x[7])/((y[8]-x[8])>0?(y[8]-x[8]):1), 100*(y[9]-x[9])/((y[10]-x[10])>0?(y[10]-x[10]):1),
        y[11]-x[11], 100*(y[4]-x[4])/hz/s, 100*(y[5]-x[5])/hz/s, 100*(y[6]-x[6])/hz/s }' "$out"
}

measure() {
  local res try other
  for try in $(seq 0 "$NOISE_RETRIES"); do
    wait_quiet
    res=$(run_dnsperf "$@")
    other=${res##* }
    [ "$other" -le "$NOISE_MAX" ] && break
    log "run disturbed: other processes used ${other}% of a core (try $((try+1)))"
  done
  echo "$res"
}

median() { sort -g | awk '{v[NR]=$1} END{ if(NR==0){print "-"; exit} if(NR%2) print v[(NR+1)/2]; else print (v[NR/2]+v[NR/2+1])/2 }'; }

# ---------------------------------------------------------------- main
main() {
  [ "$(nproc)" -ge 2 ] || die "needs at least 2 CPUs"
  [ -x "$GTMESH_BIN" ] || die "gtmesh not found at $GTMESH_BIN (build it, or set GTMESH_BIN)"
  [ -r "$SHARED_BENCH/conf/gdnsd/config" ] || die "peer bench not found at $SHARED_BENCH (set SHARED_BENCH)"
  ensure_packages
  kill_stale
  [ "$BENCH_NICE" = 0 ] || renice -n "$BENCH_NICE" -p $$ > /dev/null
  mkdir -p "$RUN_DIR/bin" "$RESULTS_DIR"
  rm -rf -- "$RESULTS_DIR/raw" "$RESULTS_DIR/logs"
  rm -f -- "$RESULTS_DIR/runs.tsv" "$RESULTS_DIR/summary.md" "$RESULTS_DIR/env.txt" "$RESULTS_DIR/verify.txt"
  mkdir -p "$RESULTS_DIR/raw" "$RESULTS_DIR/logs"
  gcc -O2 -Wall -Wextra -Werror -o "$RUN_DIR/bin/limit-plain" "$SHARED_BENCH/limit/limit_dns.c"
  gcc -O2 -Wall -Wextra -Werror -DBATCH="$BATCH" -o "$RUN_DIR/bin/limit-mmsg" "$SHARED_BENCH/limit/limit_dns.c"
  printf '%s A\n' "$QNAME" > "$RUN_DIR/queries.txt"   # = peers/queries/dyn.txt

  {
    echo "date: $(date -u +%FT%TZ)"
    echo "kernel: $(uname -r); cpus: $(nproc); cpu: $(awk -F': ' '/model name/{print $2; exit}' /proc/cpuinfo)"
    echo "gdnsd: $(dpkg-query -W -f='${Version}' gdnsd 2>/dev/null || echo '-'); knot: $(dpkg-query -W -f='${Version}' knot 2>/dev/null || echo '-'); dnsperf: $(dpkg-query -W -f='${Version}' dnsperf 2>/dev/null || echo '?')"
    echo "gtmesh: $GTMESH_BIN ($(cd "$ROOT" && git rev-parse --short HEAD 2>/dev/null || echo '?'), serve --udp-threads 1 $GTMESH_ARGS)"
    echo "dnsperf: -c $CLIENTS -q $OUTSTANDING -t $DNSPERF_TIMEOUT, query '$QNAME A', ${WARMUP}s warm-up per server, then $REPEATS interleaved rounds of ${DURATION}s"
    echo "server CPU $SERVER_CPU, dnsperf CPU $CLIENT_CPU, nice $BENCH_NICE; limit-mmsg batch $BATCH"
    [ "$RATE" -gt 0 ] && echo "second pass at a fixed offered load: dnsperf -Q $RATE"
  } > "$RESULTS_DIR/env.txt"
  cat "$RESULTS_DIR/env.txt" >&2

  local v r res load
  for v in $VARIANTS; do
    [ -n "${PORT[$v]:-}" ] || die "unknown variant '$v'"
    start_server "$v"
    res=$(verify "$v"); log "$res"; echo "$res" >> "$RESULTS_DIR/verify.txt"
  done
  sleep 1
  for v in $VARIANTS; do
    log "$v: warm-up ${WARMUP}s"
    run_dnsperf "$v" "$WARMUP" "$RESULTS_DIR/raw/$v.warmup.txt" > /dev/null
  done

  printf 'variant\tload\trep\tqps\tlat_ms\tlost\tsent\tsrv_cpu\tdnsperf_cpu\tcpu0_busy\tcpu1_busy\trcvbuf_drops\tsrv_user\tsrv_sys\tother_cpu\n' > "$RESULTS_DIR/runs.tsv"
  for load in max $([ "$RATE" -gt 0 ] && echo "$RATE"); do
    for r in $(seq 1 "$REPEATS"); do
      for v in $VARIANTS; do
        if [ "$load" = max ]; then
          res=$(measure "$v" "$DURATION" "$RESULTS_DIR/raw/$v.$r.txt")
        else
          res=$(measure "$v" "$DURATION" "$RESULTS_DIR/raw/$v.Q$load.$r.txt" -Q "$load")
        fi
        log "$v load=$load #$r: qps lat_ms lost sent srv% dnsperf% cpu0% cpu1% drops srv_user% srv_sys% other% = $res"
        printf '%s\t%s\t%s\t%s\n' "$v" "$load" "$r" "$(tr ' ' '\t' <<<"$res")" >> "$RESULTS_DIR/runs.tsv"
      done
    done
  done
  for v in $VARIANTS; do
    [[ $v == gtmesh-* ]] && kill -USR1 "${SPID[$v]}" 2>/dev/null || true
  done
  sleep 0.5
  stop_servers
  for v in $VARIANTS; do cp "$RUN_DIR/$v/server.log" "$RESULTS_DIR/logs/$v.log" 2>/dev/null || true; done

  summarize > "$RESULTS_DIR/summary.md"
  echo
  cat "$RESULTS_DIR/summary.md"
  echo
  echo "(per-run TSV, raw dnsperf output, server logs: $RESULTS_DIR)"
}

summarize() {
  local T="$RESULTS_DIR/runs.tsv" v ref floor load
  echo "# DNS responder: server CPU per query, gtmesh vs gdnsd, Knot and the floor"
  echo
  sed 's/^/    /' "$RESULTS_DIR/env.txt"
  echo
  for load in max $([ "$RATE" -gt 0 ] && echo "$RATE"); do
    if [ "$load" = max ]; then
      echo "## As fast as one dnsperf core goes (dnsperf -c $CLIENTS -q $OUTSTANDING)"
    else
      echo "## Fixed offered load: dnsperf -Q $load (same -c/-q), equal for all servers"
    fi
    echo
    # per run: µs/query = CPU% * 1e4 / qps; the table gives medians over runs
    ref=$(awk -F'\t' -v L="$load" 'NR>1 && $1=="gdnsd" && $2==L { print $8*1e4/$4 }' "$T" | median)
    floor=$(awk -F'\t' -v L="$load" 'NR>1 && $1=="mmsg" && $2==L { print $8*1e4/$4 }' "$T" | median)
    echo "| server | record | q/s median (min-max) | avg latency | lost | server CPU | **µs server CPU / query** | vs gdnsd | vs floor | user / sys µs | CPU0 busy | CPU1 busy (dnsperf) | rcvbuf drops | other procs |"
    echo "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    for v in $VARIANTS; do
      col() { awk -F'\t' -v v="$v" -v L="$load" -v c="$(($1 + 1))" 'NR>1 && $1==v && $2==L {print $c}' "$T"; }
      per_q() { awk -F'\t' -v v="$v" -v L="$load" -v c="$(($1 + 1))" 'NR>1 && $1==v && $2==L { print $c*1e4/$4 }' "$T" | median; }
      local qps mn mx sp c0 c1 lat lost drops us uu usy ot name
      qps=$(col 3 | median); mn=$(col 3 | sort -g | head -1); mx=$(col 3 | sort -g | tail -1)
      sp=$(col 7 | median); c0=$(col 9 | median); c1=$(col 10 | median); lat=$(col 4 | median); ot=$(col 14 | median)
      lost=$(col 5 | awk '{t+=$1} END{print t+0}'); drops=$(col 11 | awk '{t+=$1} END{print t+0}')
      us=$(per_q 7); uu=$(per_q 12); usy=$(per_q 13)
      case $v in
        gdnsd) name="gdnsd $(dpkg-query -W -f='${Version}' gdnsd 2>/dev/null | sed 's/-[^-]*$//')" ;;
        knot) name="Knot $(dpkg-query -W -f='${Version}' knot 2>/dev/null | sed 's/-[^-]*$//')" ;;
        mmsg) name="limit-mmsg (recvmmsg/sendmmsg, batch $BATCH)" ;;
        plain) name="limit-plain (recvfrom/sendto)" ;;
        pdns-signed) name="PowerDNS $(dpkg-query -W -f='${Version}' pdns-server 2>/dev/null | sed 's/-[^-]*$//')" ;;
        gtmesh-*) name="**gtmesh**" ;;
      esac
      awk -v n="$name" -v k="${KIND[$v]}" -v q="$qps" -v mn="$mn" -v mx="$mx" -v sp="$sp" -v us="$us" -v uu="$uu" \
          -v usy="$usy" -v c0="$c0" -v c1="$c1" -v l="$lat" -v lo="$lost" -v dr="$drops" -v ot="$ot" -v ref="$ref" \
          -v fl="$floor" 'BEGIN{
        printf "| %s | %s | %.0f (%.0f-%.0f) | %.3f ms | %d | %.1f%% | **%.2f** | %s | %s | %.2f / %.2f | %.1f%% | %.0f%% | %d | %.0f%% |\n",
          n, k, q, mn, mx, l, lo, sp, us, (ref!="-" && ref>0 ? sprintf("%.2fx", us/ref) : "-"),
          (fl!="-" && fl>0 ? sprintf("%.2fx", us/fl) : "-"), uu, usy, c0, c1, dr, ot }'
    done
    echo
  done
  echo "Medians of $REPEATS interleaved ${DURATION}s runs per server (dnsperf -c $CLIENTS -q $OUTSTANDING, one name, UDP); lost/drops: sums."
  echo "server CPU: utime+stime of all the server's threads from /proc/<pid>/stat over the load window (1 s after start"
  echo "to 1 s before end), % of one core; µs server CPU / query = that / q/s per run, then the median. vs gdnsd / vs floor:"
  echo "that figure divided by gdnsd's (DYNA weighted) and by limit-mmsg's in the same run. CPU1 at ~100 %: dnsperf is the"
  echo "bottleneck and q/s is the client's limit, not the server's. user / sys: tick-sampled, indicative only."
  echo
  if [ -s "$RUN_DIR/scrapes.txt" ]; then
    echo "gtmesh-metrics: $(grep -c '^200 ' "$RUN_DIR/scrapes.txt") scrapes of /metrics answered 200" \
         "($(awk '$1 != 200' "$RUN_DIR/scrapes.txt" | wc -l) other), $(awk '$1 == 200 {print $2; exit}' "$RUN_DIR/scrapes.txt") bytes each."
    echo
  fi
  echo "Answer checks before load (kdig):"
  echo
  sed 's/^/    /' "$RESULTS_DIR/verify.txt"
  local f
  for f in "$RESULTS_DIR"/logs/gtmesh-*.log; do
    [ -s "$f" ] || continue
    echo
    echo "$(basename "$f" .log) counters at the end (whole life, warm-up and checks included):"
    echo
    grep -h 'counters:' "$f" | tail -1 | sed 's/^/    /'
  done
}

main "$@"
