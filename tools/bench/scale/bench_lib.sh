# bench_lib.sh - small helpers the scale benchmarks share (sourced, not run).

now() { date +%s.%N; }
# A field of /proc/PID/status in kB: kb PID VmRSS
kb() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/status" 2>/dev/null; }
free_udp_port() { python3 -c 'import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
free_tcp_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
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
