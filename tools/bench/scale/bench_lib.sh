# bench_lib.sh - small helpers the scale benchmarks share (sourced, not run).

now() { date +%s.%N; }
# A field of /proc/PID/status in kB: kb PID VmRSS
kb() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/status" 2>/dev/null; }
# A loopback port free for TCP and UDP, from the project's one port picker
# (tools/free_port.py: below the ephemeral range, so nothing takes it first).
free_port() { python3 "$(dirname "${BASH_SOURCE[0]}")/../../free_port.py"; }
# "sent N, lost N, response codes: ..." from a finished dnsperf's output file.
dnsperf_summary() {
  local sent lost interrupted codes
  sent=$(awk '/Queries sent:/ { print $3 }' "$1")
  lost=$(awk '/Queries lost:/ { print $3 }' "$1")
  # Still in flight when dnsperf was stopped: neither answered nor lost.
  interrupted=$(awk '/Queries interrupted:/ { print $3 }' "$1")
  codes=$(awk '/Response codes:/ { $1 = $2 = ""; print }' "$1")
  echo "sent ${sent:-?}, lost ${lost:-?}, in flight at the stop ${interrupted:-0}, response codes:${codes:- ?}"
}
# Waits until the decider at 127.0.0.1:PORT says "config version VERSION"
# (gtmeshctl status), at most SECONDS; fails at once if process PID stops.
# wait_config_version GTMESHCTL PORT VERSION PID SECONDS
wait_config_version() {
  local ctl=$1 port=$2 version=$3 pid=$4 seconds=$5
  for _ in $(seq 1 "$seconds"); do
    "$ctl" --decider "127.0.0.1:$port" status 2>/dev/null | grep -q "config version $version " && return 0
    kill -0 "$pid" 2>/dev/null || { echo "the decider stopped" >&2; return 1; }
    sleep 1
  done
  echo "no config version $version within $seconds s" >&2
  return 1
}
# Starts one `gtmesh decider` ($GTMESH) as decider1 on the generated config
# $RUN_DIR/cfg/gtmesh.yaml with its folder $RUN_DIR/data, mesh and DNS on
# loopback at $mesh_port and $dns_port (picked free when unset, kept for a
# restart); its pid in $pid, its output in LOG.
# start_one_decider LOG
start_one_decider() {
  mesh_port=${mesh_port:-$(free_port)}
  dns_port=${dns_port:-$(free_port)}
  "$GTMESH" decider --config "$RUN_DIR/cfg/gtmesh.yaml" --data-dir "$RUN_DIR/data" --listen "127.0.0.1:$mesh_port" \
    --name decider1 --dns "127.0.0.1:$dns_port" > "$1" 2>&1 &
  pid=$!
}
