#!/usr/bin/env bash
# gtmesh set-up and entry point for the README's two commands.
#
#   tools/setup.sh demo   (as root) install what is missing, build, start the demo cluster
#   tools/setup.sh test   (as root) install what is missing, build, run every test
#   tools/setup.sh build       build only (packages already installed)
#
# Installs Debian 12 packages with apt-get when run as root and something is
# missing; builds with CMake + Ninja (+ ccache) into build/.
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
build_dir=${GTMESH_BUILD_DIR:-$here/build}
jobs=${GTMESH_JOBS:-$(nproc)}

# Build and library dependencies, then the real components tests run against.
packages_build=(build-essential cmake ninja-build pkg-config ccache git
  libcaf-dev libasio-dev libmsgpack-cxx-dev librocksdb-dev libgtest-dev libgmock-dev
  libbenchmark-dev libyaml-cpp-dev libfyaml-dev libyaml-dev libzstd-dev libmaxminddb-dev libcpp-httplib-dev libssl-dev openssl libraft-dev prometheus-cpp-dev
  libjs-chart.js libfstrm-dev libprotobuf-c-dev protobuf-c-compiler nlohmann-json3-dev libsimdjson-dev)
packages_test=(dnsutils knot-dnsutils dnsperf unbound haproxy nginx-light iproute2 procps
  python3 python3-dnspython clang libclang-rt-14-dev mmdb-bin nftables faketime prometheus
  chromium chromium-driver python3-selenium libnss3-tools curl lintian mmdebstrap systemd-container
  pdns-recursor knot-resolver bind9-utils ldnsutils knot nsd bind9
  golang-github-dnstap-golang-dnstap-cli dnstap-ldns fstrm-bin python3-jsonschema)

install_packages() {
  local missing=()
  for p in "${packages_build[@]}" "${packages_test[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "$(id -u)" -ne 0 ]; then
    echo "setup: missing Debian packages: ${missing[*]}" >&2
    echo "setup: run it as root to install them (or with sudo, where sudo is installed)" >&2
    exit 1
  fi
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  # Which of the services the test packages bring were running before: those
  # are the machine's own (an operator's nginx) and are never touched.
  local svc was_running=()
  for svc in unbound haproxy nginx pdns_recursor kresd knotd nsd named; do
    pgrep -x "$svc" >/dev/null 2>&1 && was_running+=("$svc")
  done
  # Keep the packages' own services (unbound, haproxy, nginx, knot, nsd,
  # named) from starting:
  # tests start their own instances on loopback ports.
  local policy=/usr/sbin/policy-rc.d created_policy=0
  if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' > "$policy"
    chmod +x "$policy"
    created_policy=1
  fi
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  [ "$created_policy" = 1 ] && rm -f "$policy"
  # If a package's own service started anyway (a policy-rc.d that was
  # already there allowed it), stop that one: only a service this install
  # just started, never one that ran before. Tests start their own
  # instances on free loopback ports either way.
  local unit
  for svc in unbound haproxy nginx pdns_recursor kresd knotd nsd named; do
    [[ " ${was_running[*]} " == *" $svc "* ]] && continue
    pgrep -x "$svc" >/dev/null 2>&1 || continue
    unit=$svc
    [ "$svc" = pdns_recursor ] && unit=pdns-recursor
    [ "$svc" = kresd ] && unit=kresd@1
    [ "$svc" = knotd ] && unit=knot
    command -v systemctl >/dev/null 2>&1 && systemctl stop "$unit" >/dev/null 2>&1 || true
  done
}

build() {
  cmake -S "$here" -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  cmake --build "$build_dir" -j "$jobs"
}

cmd=${1:-test}
case "$cmd" in
  demo)
    install_packages
    build
    shift || true
    # The embedded cluster (docs/mesh.md): Ctrl-C stops it.
    exec "$build_dir/tools/gtmesh" demo "$@"
    ;;
  test)
    install_packages
    build
    # The previous release, for the rolling-upgrade test, built before the
    # tests start so that it does not compete with them for the cores.
    GTMESH_BUILD_DIR=$build_dir "$here/tools/build_release.sh" 0.1.0 >/dev/null ||
      echo "setup: release 0.1.0 was not built; the rolling_upgrade test says why" >&2
    cd "$build_dir"
    started=$(date +%s)
    rc=0
    # One test more than there are cores: after the fuzz build (which counts
    # as two: PROCESSORS 2) most tests wait on timers, peers and the network,
    # and at one test per core half the CPU sat idle (docs/benchmarks.md).
    ctest --output-on-failure -j "$((jobs + 1))" --timeout 600 || rc=$?
    # The ten slowest tests of this run, to keep the suite in its budget
    # (docs/benchmarks.md, "The test suite's time").
    echo "setup: the suite took $(($(date +%s) - started)) s; its ten slowest tests:"
    awk '/^[0-9]+\/[0-9]+ Test: / { name = $3 } /^Test time = / { print $4, name }' \
      Testing/Temporary/LastTest.log 2>/dev/null | sort -rn |
      awk 'NR <= 10 { printf "  %7.1f s  %s\n", $1, $2 }' || true
    exit "$rc"
    ;;
  build)
    build
    ;;
  install-deps)
    install_packages
    ;;
  *)
    echo "usage: $0 demo|test|build|install-deps" >&2
    exit 2
    ;;
esac
