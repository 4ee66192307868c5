#!/usr/bin/env bash
# No package registry's host name is written into the repository: tests let
# apt, mmdebstrap or npm say whether they reach their registry. The hosts are
# read from this machine's own client configuration (apt's sources, npm's
# registry), so this file names none; every file git tracks is searched.
# Skips (77) when no registry is configured or the tree is not a git
# checkout.
set -uo pipefail
src=${GTMESH_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
command -v git >/dev/null && git -C "$src" rev-parse --git-dir >/dev/null 2>&1 ||
  { echo "skip: $src is not a git checkout"; exit 77; }

hosts=$(
  {
    cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources 2>/dev/null
    command -v npm >/dev/null && timeout 20 npm config get registry 2>/dev/null
    command -v pip3 >/dev/null && timeout 20 pip3 config list 2>/dev/null
  } | grep -oE '[a-z]+://[A-Za-z0-9.-]+' | sed -E 's|^[a-z]+://||' | grep '\.' | sort -u
)
[ -n "$hosts" ] || { echo "skip: no package registry is configured on this machine"; exit 77; }

failures=0
while read -r host; do
  hits=$(git -C "$src" grep -n -I -i -F -e "$host" -- . 2>/dev/null)
  if [ -n "$hits" ]; then
    echo "FAIL the repository names the registry host of this machine's package client:"
    echo "$hits" | sed 's/^/     /'
    failures=$((failures + 1))
  else
    echo "ok   no tracked file names a configured registry host ($(echo "$host" | tr -c '.\n' 'x'))"
  fi
done <<< "$hosts"
# A raw TCP reachability check by name is how the last ones crept in.
tcp=$(git -C "$src" grep -n -I -E '/dev/tcp/[A-Za-z]' -- . ':!tests/repo/registry_hosts_test.sh' 2>/dev/null)
if [ -n "$tcp" ]; then
  echo "FAIL a script opens a TCP connection by host name:"; echo "$tcp" | sed 's/^/     /'
  failures=$((failures + 1))
else
  echo "ok   no script opens /dev/tcp/ by host name"
fi
echo "$failures failed"
[ "$failures" = 0 ]
