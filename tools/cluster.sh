#!/usr/bin/env bash
# A local multi-process gtmesh cluster on loopback: three DCs (fra, iad, sin)
# with two HTTP backends each (`gtmesh backend`), one agent process per DC and
# three deciders, each with its own DNS responder, Raft log and RocksDB
# folder. The same cluster as `gtmesh demo`, as separate processes, for the
# multi-process tests and for trying failures by hand (kill -9 a decider,
# partition a link).
#
#   tools/cluster.sh start DIR [--tls]       start everything; writes DIR/cluster.env
#   tools/cluster.sh stop DIR                stop everything started in DIR
#   tools/cluster.sh restart-decider DIR N [FLAGS]  start decider N again, same addresses
#   tools/cluster.sh upgrade-decider DIR N [FLAGS]  stop decider N (SIGTERM) and start it again
#                                            with GTMESH_BIN: one step of a rolling upgrade
#   tools/cluster.sh restart-agent DIR DC [I]  stop agent aI of DC (SIGTERM) and start it again
#   tools/cluster.sh join-decider DIR N      start a new decider N (4, 5, ...) with --join; then
#                                            `gtmeshctl member add` its MESHN (docs/mesh.md)
#   tools/cluster.sh restore DIR FILE        kill -9 every decider, delete its data folder, start
#                                            each again with --restore FILE (a gtmeshctl backup)
#
# AGENTS_PER_DC=N (default 1, plain links only) starts N agent instances per
# DC (a1..aN): 3 deciders + 3N agents, e.g. 12 mesh nodes with N=3.
#
# DIR/cluster.env holds DNS1..DNS3 (ADDR:PORT of each responder), MESH1..MESH3
# (each decider), HTTP1..HTTP3 (each decider's /metrics listener),
# AGENT_HTTP_FRA/IAD/SIN (each agent's), GTMESHCTL (a gtmeshctl command line naming every decider,
# decider 1 first), GTMESHCTL1..3 (one decider each) and the pids. The
# deciders' mesh and DNS ports are picked free before they start (every
# decider must know every other's address: Raft membership), the backends'
# by the kernel, so several clusters can run side by side. With --tls a
# cluster CA and role certificates are made with `gtmeshctl ca` and every
# mesh link is mutual TLS.
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
bin=${GTMESH_BIN:-$here/build/tools/gtmesh}
ctl=${GTMESHCTL_BIN:-$(dirname "$bin")/gtmeshctl}
deciders=(1 2 3)

wait_for_file() { # FILE SECONDS [PID LOG]: with PID, a process that exits first fails at once
  local deadline=$((SECONDS + $2))
  until [ -s "$1" ]; do
    if [ -n "${3:-}" ] && ! kill -0 "$3" 2>/dev/null; then
      echo "cluster: the process writing $1 exited; the end of $4:" >&2
      tail -n 20 "$4" >&2
      return 1
    fi
    if [ $SECONDS -ge $deadline ]; then
      echo "cluster: timed out waiting for $1${4:+; the end of $4:}" >&2
      [ -z "${4:-}" ] || tail -n 20 "$4" >&2
      return 1
    fi
    sleep 0.05
  done
}

free_port() { # DIR: a TCP and UDP port free right now on 127.0.0.1, below the kernel's
  # ephemeral range (tools/free_port.py says why) and not already in DIR/addresses
  local port
  while :; do
    port=$(python3 "$here/tools/free_port.py")
    grep -q ":$port\$" "$1/addresses" 2>/dev/null || break
  done
  echo "$port"
}

addresses() { # DIR: picks every decider's mesh and DNS address once
  local dir=$1
  [ -f "$dir/addresses" ] && return 0
  for n in "${deciders[@]}"; do
    echo "mesh$n 127.0.0.1:$(free_port "$dir")"
    echo "dns$n 127.0.0.1:$(free_port "$dir")"
  done >"$dir/addresses"
}

address() { # DIR KEY
  awk -v k="$2" '$1 == k {print $2}' "$1/addresses"
}

known_deciders() { # DIR: the numbers of every decider ever started in DIR
  awk '$1 ~ /^mesh[0-9]+$/ {print substr($1, 5)}' "$1/addresses"
}

start_decider() { # DIR N [DECIDER FLAGS...] (--join, --restore FILE)
  local dir=$1 n=$2 peer_args=() tls_args=() extra_args=("${@:3}")
  for m in $(known_deciders "$dir"); do
    [ "$m" = "$n" ] || peer_args+=(--peer "$(address "$dir" "mesh$m")")
  done
  [ -f "$dir/tls/ca.pem" ] && tls_args=(--tls-ca "$dir/tls/ca.pem" --tls-cert "$dir/tls/decider$n.pem" --tls-key "$dir/tls/decider$n.key")
  rm -f "$dir/decider$n.ports"
  "$bin" decider --config "$dir/cluster.yaml" --data-dir "$dir/decider$n" --listen "$(address "$dir" "mesh$n")" \
    --name "decider$n" --dns "$(address "$dir" "dns$n")" --port-file "$dir/decider$n.ports" --faults \
    --http 127.0.0.1:0 \
    --dc-down-after 3s "${peer_args[@]}" "${tls_args[@]}" "${extra_args[@]}" >>"$dir/decider$n.log" 2>&1 &
  echo $! >"$dir/decider$n.pid"
  wait_for_file "$dir/decider$n.ports" 30 "$!" "$dir/decider$n.log"
}

write_env() { # DIR
  local dir=$1 tls="" all=""
  [ -f "$dir/tls/ca.pem" ] && tls=" --tls-ca $dir/tls/ca.pem --tls-cert $dir/tls/gtmeshctl.pem --tls-key $dir/tls/gtmeshctl.key"
  for n in $(known_deciders "$dir"); do all+=" --decider $(address "$dir" "mesh$n")"; done
  {
    for n in $(known_deciders "$dir"); do
      echo "DNS$n=$(address "$dir" "dns$n")"
      echo "MESH$n=$(address "$dir" "mesh$n")"
      echo "HTTP$n=$(awk '$1 == "http" {print $2}' "$dir/decider$n.ports")"
      echo "GTMESHCTL$n=\"$ctl --decider $(address "$dir" "mesh$n")$tls\""
    done
    echo "GTMESHCTL=\"$ctl$all$tls\""
    for dc in fra iad sin; do
      local a
      a=$(address "$dir" "agent-http-$dc")
      [ -z "$a" ] || echo "AGENT_HTTP_${dc^^}=$a"
    done
  } >"$dir/cluster.env"
}

start_agent() { # DIR DC I: agent instance aI of DC
  local dir=$1 dc=$2 i=$3 tls_args=()
  [ -f "$dir/tls/ca.pem" ] && tls_args=(--tls-ca "$dir/tls/ca.pem" --tls-cert "$dir/tls/agent-$dc.pem" --tls-key "$dir/tls/agent-$dc.key")
  local d1 d2 d3
  d1=$(address "$dir" mesh1)
  d2=$(address "$dir" mesh2)
  d3=$(address "$dir" mesh3)
  # Each DC's agent prefers another decider, so every decider has agents.
  local order=("$d1" "$d2" "$d3")
  [ "$dc" = iad ] && order=("$d2" "$d3" "$d1")
  [ "$dc" = sin ] && order=("$d3" "$d1" "$d2")
  # The first instance keeps the names it always had (agent-DC.pid, agent-http-DC).
  local name=agent-$dc
  [ "$i" = 1 ] || name=agent-$dc-a$i
  grep -q "^agent-http-${name#agent-} " "$dir/addresses" ||
    echo "agent-http-${name#agent-} 127.0.0.1:$(free_port "$dir")" >>"$dir/addresses"
  "$bin" agent --config "$dir/cluster.yaml" --dc "$dc" --instance "a$i" --quiet \
    --http "$(address "$dir" "agent-http-${name#agent-}")" --decider "${order[0]}" --decider "${order[1]}" \
    --decider "${order[2]}" "${tls_args[@]}" >>"$dir/$name.log" 2>&1 &
  echo $! >"$dir/$name.pid"
}

stop_process() { # DIR NAME: SIGTERM the process of DIR/NAME.pid and wait (kill -9 after 10 s)
  local pidfile=$1/$2.pid
  [ -f "$pidfile" ] || return 0
  local pid deadline=$((SECONDS + 10))
  pid=$(cat "$pidfile")
  kill "$pid" 2>/dev/null || true
  while kill -0 "$pid" 2>/dev/null && [ $SECONDS -lt $deadline ]; do sleep 0.05; done
  kill -9 "$pid" 2>/dev/null || true
  while kill -0 "$pid" 2>/dev/null; do sleep 0.05; done
  rm -f "$pidfile"
}

restart_agent() { # DIR DC [I]: stop agent instance aI of DC and start it again (with $GTMESH_BIN)
  local name=agent-$2
  [ "${3:-1}" = 1 ] || name=agent-$2-a$3
  stop_process "$1" "$name"
  start_agent "$1" "$2" "${3:-1}"
}

start() { # DIR [--tls]
  local dir=$1
  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd)
  if [ "${2:-}" = "--tls" ]; then
    "$ctl" ca init --dir "$dir/tls" --cluster local >/dev/null
    for n in "${deciders[@]}"; do
      "$ctl" ca issue "decider$n" --role decider --dir "$dir/tls" >/dev/null
    done
    for dc in fra iad sin; do
      "$ctl" ca issue "agent-$dc" --role agent --dc "$dc" --instance a1 --dir "$dir/tls" >/dev/null
    done
    "$ctl" ca issue gtmeshctl --role operator --dir "$dir/tls" >/dev/null
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
  addresses "$dir"
  for n in "${deciders[@]}"; do start_decider "$dir" "$n"; done
  write_env "$dir"
  local per_dc=${AGENTS_PER_DC:-1}
  if [ "$per_dc" != 1 ] && [ -f "$dir/tls/ca.pem" ]; then
    echo "cluster.sh: AGENTS_PER_DC works with plain links only (one certificate per DC agent)" >&2
    exit 2
  fi
  local dc i
  for dc in fra iad sin; do
    for i in $(seq 1 "$per_dc"); do start_agent "$dir" "$dc" "$i"; done
  done
  write_env "$dir"
  cat "$dir/cluster.env"
}

join_decider() { # DIR N: a new decider that joins the running cluster
  local dir=$1 n=$2
  grep -q "^mesh$n " "$dir/addresses" || {
    echo "mesh$n 127.0.0.1:$(free_port "$dir")"
    echo "dns$n 127.0.0.1:$(free_port "$dir")"
  } >>"$dir/addresses"
  if [ -f "$dir/tls/ca.pem" ] && [ ! -f "$dir/tls/decider$n.pem" ]; then
    "$ctl" ca issue "decider$n" --role decider --dir "$dir/tls" >/dev/null
  fi
  start_decider "$dir" "$n" --join
  write_env "$dir"
}

restore() { # DIR FILE: every decider's data folder lost, each restarted from the backup FILE
  local dir=$1 file=$2
  for n in $(known_deciders "$dir"); do
    [ -f "$dir/decider$n.pid" ] || continue
    local pid
    pid=$(cat "$dir/decider$n.pid")
    kill -9 "$pid" 2>/dev/null || true
    while kill -0 "$pid" 2>/dev/null; do sleep 0.05; done
    rm -f "$dir/decider$n.pid"
    rm -rf "$dir/decider$n"
  done
  for n in $(known_deciders "$dir"); do
    start_decider "$dir" "$n" --restore "$file"
  done
  write_env "$dir"
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
  restart-decider) start_decider "$(cd "$2" && pwd)" "$3" "${@:4}"; write_env "$(cd "$2" && pwd)" ;;
  upgrade-decider)
    stop_process "$(cd "$2" && pwd)" "decider$3"
    start_decider "$(cd "$2" && pwd)" "$3" "${@:4}"
    write_env "$(cd "$2" && pwd)"
    ;;
  restart-agent) restart_agent "$(cd "$2" && pwd)" "$3" "${4:-1}" ;;
  join-decider) join_decider "$(cd "$2" && pwd)" "$3" ;;
  restore) restore "$(cd "$2" && pwd)" "$(realpath "$3")" ;;
  *) echo "usage: $0 start DIR [--tls] | stop DIR | restart-decider DIR N [FLAGS] | upgrade-decider DIR N [FLAGS] |" \
    "restart-agent DIR DC [I] | join-decider DIR N | restore DIR FILE" >&2; exit 2 ;;
esac
