#!/usr/bin/env bash
# The Debian package, end to end (as root):
#   1. CPack builds gtmesh_VERSION_amd64.deb from the build tree;
#   2. lintian finds no errors;
#   3. mmdebstrap makes a clean Debian 12 root (with systemd, for its
#      analyzer) in a temporary directory; apt installs the package there,
#      pulling the dependencies dpkg-shlibdeps declared;
#   4. systemd-analyze verify accepts both units there, and systemd-analyze
#      security rates them OK (exposure below 2.5);
#   5. the installed binaries run from that root: gtmesh check-config on the
#      shipped config, gtmesh serve answering dig; the gtmesh user and
#      /var/lib/gtmesh (0750) exist;
#   6. an upgrade keeps an edited /etc/gtmesh/gtmesh.yaml; remove keeps the
#      state and the user; purge removes both.
# Skips (77) when mmdebstrap reports the Debian archive unreachable: the
# clean root comes from it. Everything it makes is under one temporary directory, removed at
# the end; the dig traffic stays on loopback.
set -uo pipefail
build=${1:?usage: package_test.sh BUILD_DIR}
src=${GTMESH_SOURCE_DIR:-$(cd "$(dirname "$0")/../../.." && pwd)}
. "$(dirname "$0")/clean_root.sh"
failures=0
check() { # ok-status message
  if [ "$1" = 0 ]; then echo "ok   $2"; else echo "FAIL $2"; failures=$((failures + 1)); fi
}
for tool in cpack lintian mmdebstrap dig; do
  command -v "$tool" >/dev/null || { echo "skip: $tool missing (tools/setup.sh installs it)"; exit 77; }
done
[ "$(id -u)" = 0 ] || { echo "skip: needs root (chroot)"; exit 77; }

work=$(mktemp -d /tmp/gtmesh-package.XXXXXX)
root=$work/root
serve_pid=""
cleanup() {
  [ -n "$serve_pid" ] && kill "$serve_pid" 2>/dev/null
  umount -l "$root/proc" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

# 1. The package.
cpack --config "$build/CPackConfig.cmake" -G DEB -B "$work/pkg" > "$work/cpack.log" 2>&1
deb=$(ls "$work"/pkg/gtmesh_*_amd64.deb 2>/dev/null | head -1)
check $([ -n "$deb" ] && echo 0 || echo 1) "cpack builds the package: $(basename "${deb:-none}")" || true
[ -n "$deb" ] || { cat "$work/cpack.log"; exit 1; }
dpkg-deb -I "$deb" | grep -E "^ (Depends|Version):"

# 2. lintian: no errors.
lintian "$deb" > "$work/lintian.log" 2>&1
errors=$(grep -c "^E:" "$work/lintian.log")
check $([ "$errors" = 0 ] && echo 0 || echo 1) "lintian: no errors ($(grep -c '^W:' "$work/lintian.log") warnings)"
grep -E "^[EW]:" "$work/lintian.log"

# 3. A clean Debian 12 root with the package installed by apt (a skip when
# mmdebstrap reports the archive unreachable: clean_root.sh).
cp "$deb" "$work/gtmesh.deb"
if ! make_clean_root "$root" systemd,systemd-sysv "$work/mmdebstrap.log"; then
  check 1 "mmdebstrap makes a clean Debian 12 root"
  exit 1
fi
mount -t proc proc "$root/proc"
cp "$work/gtmesh.deb" "$root/tmp/gtmesh.deb"
in_root() { chroot "$root" "$@"; }
# mmdebstrap leaves no package lists behind.
in_root apt-get update -qq > "$work/update.log" 2>&1
check $? "apt-get update in the clean root"
in_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq /tmp/gtmesh.deb > "$work/install.log" 2>&1
check $? "apt installs the package into the clean root, with its declared dependencies"
in_root dpkg -s gtmesh | grep -q "^Status: install ok installed"
check $? "dpkg knows it as installed"

# 4. The units, checked where the binaries they name are. A template is
# verified through an instance of it.
in_root cp /lib/systemd/system/gtmesh-agent@.service /tmp/gtmesh-agent@fra.service
for unit in /lib/systemd/system/gtmesh-decider.service /tmp/gtmesh-agent@fra.service; do
  out=$(in_root systemd-analyze verify "$unit" 2>&1)
  check $([ -z "$out" ] && echo 0 || echo 1) "systemd-analyze verify $(basename "$unit"): ${out:-clean}"
  score=$(in_root systemd-analyze security --offline=true "$unit" 2>&1 |
          sed -nE 's/.*Overall exposure level for [^:]+: ([0-9.]+).*/\1/p')
  check $(awk -v s="${score:-99}" 'BEGIN { exit !(s < 2.5) }' && echo 0 || echo 1) \
    "systemd-analyze security $(basename "$unit"): exposure ${score:-?} (below 2.5)"
done

# 5. The installed binaries, run from the root.
in_root gtmesh check-config /etc/gtmesh/gtmesh.yaml
check $? "gtmesh check-config accepts the shipped /etc/gtmesh/gtmesh.yaml"
port=$(python3 "$src/tools/free_port.py") # UDP and TCP both free (a kernel-picked UDP port lost its TCP twin once)
chroot --userspec=gtmesh:gtmesh "$root" gtmesh serve --config /etc/gtmesh/gtmesh.yaml --listen "127.0.0.1:$port" \
  > "$work/serve.log" 2>&1 &
serve_pid=$!
answer=""
for _ in $(seq 50); do
  answer=$(dig @127.0.0.1 -p "$port" www.example.test A +short +time=1 +tries=1 2>/dev/null)
  [ "$answer" = 192.0.2.1 ] && break
  sleep 0.2
done
check $([ "$answer" = 192.0.2.1 ] && echo 0 || echo 1) "the installed gtmesh serve, run as user gtmesh, answers dig: ${answer:-nothing}"
[ "$answer" = 192.0.2.1 ] || cat "$work/serve.log"
kill "$serve_pid" 2>/dev/null; wait "$serve_pid" 2>/dev/null; serve_pid=""
in_root getent passwd gtmesh | grep -q "^gtmesh:.*:/var/lib/gtmesh:/usr/sbin/nologin$"
check $? "postinst made the gtmesh system user"
mode=$(in_root stat -c '%a %U:%G' /var/lib/gtmesh)
check $([ "$mode" = "750 gtmesh:gtmesh" ] && echo 0 || echo 1) "/var/lib/gtmesh is 0750 gtmesh:gtmesh ($mode)"

# 6. Upgrade, remove, purge. The upgrade is the same package at a higher
# version; an edited conffile must survive it.
echo "# edited by the operator" >> "$root/etc/gtmesh/gtmesh.yaml"
touch "$root/var/lib/gtmesh/state-marker"
mkdir "$work/up" && dpkg-deb -R "$deb" "$work/up/x"
sed -i -E 's/^Version: (.*)$/Version: \1+1/' "$work/up/x/DEBIAN/control"
dpkg-deb -b --root-owner-group "$work/up/x" "$root/tmp/gtmesh-up.deb" >/dev/null
in_root env DEBIAN_FRONTEND=noninteractive dpkg -i --force-confdef --force-confold /tmp/gtmesh-up.deb > "$work/upgrade.log" 2>&1
check $? "the upgrade installs ($(in_root dpkg-query -W -f='${Version}' gtmesh))"
grep -q "edited by the operator" "$root/etc/gtmesh/gtmesh.yaml"
check $? "the upgrade keeps the edited /etc/gtmesh/gtmesh.yaml"
in_root env DEBIAN_FRONTEND=noninteractive apt-get remove -y -qq gtmesh > "$work/remove.log" 2>&1
[ -e "$root/var/lib/gtmesh/state-marker" ] && in_root getent passwd gtmesh >/dev/null &&
  grep -q "edited by the operator" "$root/etc/gtmesh/gtmesh.yaml"
check $? "remove keeps the state, the user and the edited config"
in_root env DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq gtmesh > "$work/purge.log" 2>&1
[ ! -e "$root/var/lib/gtmesh" ] && ! in_root getent passwd gtmesh >/dev/null && [ ! -e "$root/etc/gtmesh/gtmesh.yaml" ]
check $? "purge removes the state, the user and the configs"

[ "$failures" = 0 ] && echo "all checks passed" || echo "$failures check(s) failed"
[ "$failures" = 0 ]
