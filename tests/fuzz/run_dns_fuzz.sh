#!/usr/bin/env bash
# Kept for the commands quoted in docs/dns.md: the DNS query fuzzer through the
# general script, tests/fuzz/run_fuzz.sh (see there; `--sources` is no longer
# needed, CMake's manifest says what each target is made of).
#
#   tests/fuzz/run_dns_fuzz.sh [--build-dir DIR] [--time SECONDS] [--jobs N] [-- LIBFUZZER ARGS...]
set -euo pipefail
args=()
while [ $# -gt 0 ]; do
  case $1 in
    --sources) shift 2 ;;
    --) break ;;
    *) args+=("$1"); shift ;;
  esac
done
exec "$(dirname "$0")/run_fuzz.sh" "${args[@]}" dns_query "$@"
