# Sourced by the package tests: a clean Debian 12 root from the archive apt
# is configured with, and a skip when that archive cannot be reached.
#
#   make_clean_root DIR INCLUDE LOG
#
# Runs mmdebstrap (--variant=apt, --include=INCLUDE) into a tarball kept in
# the build tree for a day, and unpacks it into DIR; mmdebstrap's output in
# LOG. Returns 0 when the root is made. When mmdebstrap fails and its own
# words say the archive could not be reached (name resolution, connection,
# fetch failures), the test skips with 77; any other failure returns 1, with
# the end of LOG printed. No host is named here: mmdebstrap uses the
# machine's apt sources and reports for itself whether they answer.

# What apt and mmdebstrap print when the archive is out of reach.
unreachable_archive_words='Temporary failure resolving|Could not resolve|Failed to fetch|Unable to connect|Could not connect|Connection failed|Connection timed out|Network is unreachable|No route to host|Unable to fetch|Some index files failed to download|cannot download'

# True when LOG says the archive was out of reach.
archive_unreachable() { # LOG
  grep -Eqi "$unreachable_archive_words" "$1"
}

make_clean_root() { # DIR INCLUDE LOG
  local dir=$1 include=$2 log=$3
  # One root serves both package tests (they may run at the same time):
  # made once per build tree and day, under a lock, and copied. mmdebstrap
  # takes minutes; copying the tarball takes seconds.
  local cache=${GTMESH_BINARY_DIR:-/tmp}/package-clean-root.${include//,/+}.tar
  if (
    flock 9
    if [ -s "$cache" ] && [ -n "$(find "$cache" -mmin -1440 2>/dev/null)" ]; then
      exit 0
    fi
    rm -f "$cache.new"
    mmdebstrap --variant=apt --include="$include" --format=tar --quiet bookworm "$cache.new" > "$log" 2>&1 &&
      mv "$cache.new" "$cache"
  ) 9>"$cache.lock"; then
    mkdir -p "$dir" && tar --numeric-owner -xpf "$cache" -C "$dir" >> "$log" 2>&1 && return 0
  fi
  if archive_unreachable "$log"; then
    grep -Ei "$unreachable_archive_words" "$log" | head -3
    echo "skip: mmdebstrap could not reach the Debian archive (the clean root comes from it)"
    exit 77
  fi
  tail -20 "$log"
  return 1
}
