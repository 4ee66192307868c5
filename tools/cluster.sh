#!/usr/bin/env bash
# A local multi-process gtmesh cluster on loopback: three DCs (fra, iad, sin)
# with two HTTP backends each (`gtmesh backend`), one agent process per DC and
# two deciders, each with its own DNS responder and RocksDB folder. The same
# cluster as `gtmesh demo`, as separate processes, for the multi-process tests
# and for trying failures by hand (kill -9 a decider, partition a link).
#
#   tools/cluster.sh start DIR [--tls]   start everything; writes DIR/cluster.env
#   tools/cluster.sh stop DIR            stop everything started in DIR
#   tools/cluster.sh restart-decider DIR N   start decider N (1 or 2) again
#
# DIR/cluster.env holds DNS1, DNS2 (ADDR:PORT of each responder), MESH1, MESH2
# (each decider), GTMESHCTL (a gtmeshctl command line for decider 1) and the
# pids. Every port is picked by the kernel (port 0) and read back from port
# files, so several clusters can run side by side. With --tls a cluster CA
# and node certificates are made with `gtmeshctl ca` and every mesh link is
# mutual TLS.
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
bin=${GTMESH_BIN:-$here/build/tools/gtmesh}
ctl=${GTMESHCTL_BIN:-$(dirname "$bin")/gtmeshctl}

wait_for_file() { # FILE SECONDS
  local deadline=$((SECONDS + $2))
  until [ -s "$1" ]; do
    if [ $SECONDS -ge $deadline ]; then
      echo "cluster: timed out waiting for $1" >&2
      return 1
    fi
    sleep 0.05
  done
}

start_decider() { # DIR N
  local dir=$1 n=$2 other=$((3 - $2)) peer_args=() tls_args=() mesh=127.0.0.1:0 dns=127.0.0.1:0
  # A restart keeps its ports, so that peers and clients find it again.
  if [ -f "$dir/decider$n.ports" ]; then
    mesh=$(awk '/^mesh/{print $2}' "$dir/decider$n.ports")
    dns=$(awk '/^dns/{print $2}' "$dir/decider$n.ports")
  fi
  [ -f "$dir/decider$other.ports" ] && peer_args=(--peer "$(awk '/^mesh/{print $2}' "$dir/decider$other.ports")")
  [ -f "$dir/tls/ca.pem" ] && tls_args=(--tls-ca "$dir/tls/ca.pem" --tls-cert "$dir/tls/decider$n.pem" --tls-key "$dir/tls/decider$n.key")
  rm -f "$dir/decider$n.ports"
  "$bin" decider --config "$dir/cluster.yaml" --data-dir "$dir/decider$n" --listen "$mesh" \
    --name "decider$n" --dns "$dns" --port-file "$dir/decider$n.ports" --faults \
    --dc-down-after 3s "${peer_args[@]}" "${tls_args[@]}" >>"$dir/decider$n.log" 2>&1 &
  echo $! >"$dir/decider$n.pid"
  wait_for_file "$dir/decider$n.ports" 30
}

write_env() { # DIR
  local dir=$1 tls=""
  [ -f "$dir/tls/ca.pem" ] && tls="--tls-ca $dir/tls/ca.pem --tls-cert $dir/tls/gtmeshctl.pem --tls-key $dir/tls/gtmeshctl.key"
  {
    echo "DNS1=$(awk '/^dns/{print $2}' "$dir/decider1.ports")"
    echo "DNS2=$(awk '/^dns/{print $2}' "$dir/decider2.ports")"
    echo "MESH1=$(awk '/^mesh/{print $2}' "$dir/decider1.ports")"
    echo "MESH2=$(awk '/^mesh/{print $2}' "$dir/decider2.ports")"
    echo "GTMESHCTL=\"$ctl --decider $(awk '/^mesh/{print $2}' "$dir/decider1.ports") $tls\""
    echo "GTMESHCTL2=\"$ctl --decider $(awk '/^mesh/{print $2}' "$dir/decider2.ports") $tls\""
  } >"$dir/cluster.env"
}

start() { # DIR [--tls]
  local dir=$1
  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd)
  if [ "${2:-}" = "--tls" ]; then
    "$ctl" ca init --dir "$dir/tls" --cluster local >/dev/null
    for node in decider1 decider2 agent-fra agent-iad agent-sin gtmeshctl; do
      "$ctl" ca issue "$node" --dir "$dir/tls" >/dev/null
    done
  fi
  # Backends: two per DC, /health fails while DIR/down-<dc> exists.
  local ports=()
  for dc in fra iad sin; do
    for i in 1 2; do
      rm -f "$dir/backend-$dc-$i.port"
      "$bin" backend --listen 127.0.0.1:0 --name "$dc-$i" --down-file "$dir/down-$dc" \
        --port-file "$dir/backend-$dc-$i.port" >>"$dir/backends.log" 2>&1 &
      echo $! >"$dir/backend-$dc-$i.pid"
    done
  done
  for dc in fra iad sin; do
    for i in 1 2; do
      wait_for_file "$dir/backend-$dc-$i.port" 10
    done
  done
  port() { cat "$dir/backend-$1-$2.port"; }
  sed -e "s/@FRA1@/$(port fra 1)/g; s/@FRA2@/$(port fra 2)/g; s/@IAD1@/$(port iad 1)/g" \
      -e "s/@IAD2@/$(port iad 2)/g; s/@SIN1@/$(port sin 1)/g; s/@SIN2@/$(port sin 2)/g" \
      -e "s#@MMDB@#$here/tests/data/test.mmdb#g" \
      "$here/configs/cluster.yaml.in" >"$dir/cluster.yaml"
  "$bin" check-config "$dir/cluster.yaml" >/dev/null
  start_decider "$dir" 1
  start_decider "$dir" 2
  write_env "$dir"
  local d1 d2
  d1=$(awk '/^mesh/{print $2}' "$dir/decider1.ports")
  d2=$(awk '/^mesh/{print $2}' "$dir/decider2.ports")
  for dc in fra iad sin; do
    local tls_args=()
    [ -f "$dir/tls/ca.pem" ] && tls_args=(--tls-ca "$dir/tls/ca.pem" --tls-cert "$dir/tls/agent-$dc.pem" --tls-key "$dir/tls/agent-$dc.key")
    # Agents of even DCs prefer decider 2, so both deciders have agents.
    local order=("$d1" "$d2")
    [ "$dc" = iad ] && order=("$d2" "$d1")
    "$bin" agent --config "$dir/cluster.yaml" --dc "$dc" --instance a1 --quiet \
      --decider "${order[0]}" --decider "${order[1]}" "${tls_args[@]}" >>"$dir/agent-$dc.log" 2>&1 &
    echo $! >"$dir/agent-$dc.pid"
  done
  cat "$dir/cluster.env"
}

stop() { # DIR
  local dir=$1
  for pidfile in "$dir"/*.pid; do
    [ -f "$pidfile" ] || continue
    kill "$(cat "$pidfile")" 2>/dev/null || true
  done
  local deadline=$((SECONDS + 10))
  for pidfile in "$dir"/*.pid; do
    [ -f "$pidfile" ] || continue
    local pid
    pid=$(cat "$pidfile")
    while kill -0 "$pid" 2>/dev/null && [ $SECONDS -lt $deadline ]; do sleep 0.05; done
    kill -9 "$pid" 2>/dev/null || true
    rm -f "$pidfile"
  done
}

case "${1:-}" in
  start) start "$2" "${3:-}" ;;
  stop) stop "$2" ;;
  restart-decider) start_decider "$(cd "$2" && pwd)" "$3"; write_env "$(cd "$2" && pwd)" ;;
  *) echo "usage: $0 start DIR [--tls] | stop DIR | restart-decider DIR N" >&2; exit 2 ;;
esac
