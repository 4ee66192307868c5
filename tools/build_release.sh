#!/usr/bin/env bash
# Builds the binaries of an earlier release from this repository's own
# history, for the rolling-upgrade test and the chaos harness:
#
#   tools/build_release.sh VERSION     prints the folder holding its gtmesh and gtmeshctl
#
# The release's commit comes from docs/releases.md (a tag does not travel
# with every clone). Its tree is taken with `git archive` (nothing is added
# to this clone's worktrees) into BUILD/releases/VERSION/src and built there
# with its own CMakeLists (ccache), only the two binaries; a second run only
# checks that they are up to date. Exit 3 when the commit is not in this
# clone's history (a shallow clone: `git fetch --unshallow`).
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
build_dir=${GTMESH_BUILD_DIR:-$here/build}
jobs=${GTMESH_JOBS:-$(nproc)}
version=${1:?usage: $0 VERSION}

commit=$(awk -F'|' -v v="$version" '{gsub(/[ `]/, "", $2); gsub(/[ `]/, "", $3)} $2 == v {print $3}' \
  "$here/docs/releases.md")
if ! [[ "$commit" =~ ^[0-9a-f]{40}$ ]]; then
  echo "build_release: docs/releases.md names no commit for release $version" >&2
  exit 2
fi
if ! git -C "$here" cat-file -e "$commit^{commit}" 2>/dev/null; then
  echo "build_release: release $version (commit $commit) is not in this clone's history;" \
    "a shallow clone needs 'git fetch --unshallow'" >&2
  exit 3
fi
out=$build_dir/releases/$version
if [ "$(cat "$out/src/.commit" 2>/dev/null)" != "$commit" ]; then
  rm -rf "$out"
  mkdir -p "$out/src"
  git -C "$here" archive "$commit" | tar -x -C "$out/src"
  echo "$commit" >"$out/src/.commit"
fi
if [ ! -f "$out/build/build.ninja" ]; then
  # An old release only has to run beside the new one in the upgrade tests:
  # -O1 and no debug information build it in about half the time of the
  # product's -O2 -g (docs/benchmarks.md, "The test suite's time").
  cmake -S "$out/src" -B "$out/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_FLAGS_RELEASE="-O1 -DNDEBUG" \
    -DCMAKE_CXX_FLAGS_RELEASE="-O1 -DNDEBUG" >/dev/null
fi
cmake --build "$out/build" -j "$jobs" --target gtmesh gtmeshctl >"$out/build.log" 2>&1 || {
  echo "build_release: building release $version failed; the end of $out/build.log:" >&2
  tail -n 30 "$out/build.log" >&2
  exit 1
}
echo "$out/build/tools"
