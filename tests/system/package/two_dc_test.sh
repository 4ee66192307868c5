#!/usr/bin/env bash
# From two empty machines to a running two-DC cluster, the way
# docs/deploy.md tells an operator to do it, under real systemd (as root):
#
#   machine A (DC fra): the package, a decider (gtmesh-decider.service) and
#                       the agents of fra, enrolled with `gtmeshctl enroll fra`
#   machine B (DC ams): the package and the agents of ams, enrolled with
#                       `gtmeshctl enroll ams` against A's decider
#
# Each machine is a clean Debian 12 root (mmdebstrap) booted with its own
# systemd as PID 1 by systemd-nspawn, in a network namespace this test
# creates; a veth pair joins the two (10.231.0.0/24). The operator's
# machine is this one: it makes the CA and the certificates, and talks to
# the decider over mutual TLS with an operator certificate.
#
# It checks that the units start as Type=notify services that are ready when
# `systemctl start` returns (DNS answers at once), run as the gtmesh user with
# their hardening applied, that A's decider routes on B's measurements (the
# primary DC is ams; taking its backend down moves the answer to fra), and
# that systemd restarts an agent killed with SIGKILL.
#
# Skips (77) without systemd-nspawn, without root, or when mmdebstrap
# reports the Debian archive unreachable. Everything it makes (roots, namespaces, containers) is
# removed at the end; traffic stays inside the two namespaces.
set -uo pipefail
build=${1:?usage: two_dc_test.sh BUILD_DIR}
src=${GTMESH_SOURCE_DIR:-$(cd "$(dirname "$0")/../../.." && pwd)}
. "$(dirname "$0")/clean_root.sh"
ctl=$build/tools/gtmeshctl
failures=0
check() { # ok-status message
  if [ "$1" = 0 ]; then echo "ok   $2"; else echo "FAIL $2"; failures=$((failures + 1)); fi
}
for tool in cpack mmdebstrap systemd-nspawn nsenter dig ip; do
  command -v "$tool" >/dev/null || { echo "skip: $tool missing (tools/setup.sh installs it)"; exit 77; }
done
[ "$(id -u)" = 0 ] || { echo "skip: needs root (containers, namespaces)"; exit 77; }

work=$(mktemp -d /tmp/gtmesh-two-dc.XXXXXX)
tag=$(basename "$work" | tr -dc 'a-zA-Z0-9' | tail -c 6)
ns_a=gtm2dc-a-$tag ns_b=gtm2dc-b-$tag
ip_a=10.231.0.1 ip_b=10.231.0.2
declare -A nspawn_pid leader
cleanup() {
  for m in a b; do
    local p=${nspawn_pid[$m]:-}
    [ -n "$p" ] || continue
    kill -TERM "$p" 2>/dev/null
    for _ in $(seq 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$p" 2>/dev/null
    [ -n "${leader[$m]:-}" ] && kill -KILL "${leader[$m]}" 2>/dev/null
  done
  ip netns del "$ns_a" 2>/dev/null
  ip netns del "$ns_b" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

# The package, and one clean root with it installed, copied for machine B.
cpack --config "$build/CPackConfig.cmake" -G DEB -B "$work/pkg" > "$work/cpack.log" 2>&1
deb=$(ls "$work"/pkg/gtmesh_*_amd64.deb 2>/dev/null | head -1)
[ -n "$deb" ] || { cat "$work/cpack.log"; check 1 "cpack builds the package"; exit 1; }
root_a=$work/machine-a root_b=$work/machine-b
if ! make_clean_root "$root_a" systemd,systemd-sysv "$work/mmdebstrap.log"; then
  check 1 "mmdebstrap makes a clean Debian 12 root"
  exit 1
fi
cp "$deb" "$root_a/tmp/gtmesh.deb"
# Installed before boot, with chroot (apt needs the mirror, which the
# machines' namespaces cannot reach).
mount -t proc proc "$root_a/proc"
chroot "$root_a" apt-get update -qq > "$work/update.log" 2>&1 &&
  chroot "$root_a" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq /tmp/gtmesh.deb > "$work/install.log" 2>&1
check $? "apt installs the package into a clean Debian 12 root"
umount "$root_a/proc"
cp -a "$root_a" "$root_b"
# Containers at all? (Some sandboxes refuse the namespaces nspawn needs.)
if ! systemd-nspawn -q -D "$root_b" --register=no --keep-unit /bin/true > "$work/nspawn-probe.log" 2>&1; then
  cat "$work/nspawn-probe.log"
  echo "skip: systemd-nspawn cannot start a container here"
  exit 77
fi
echo machine-a > "$root_a/etc/hostname"
echo machine-b > "$root_b/etc/hostname"

# This sandbox's hard limit on open files may be below the units'
# LimitNOFILE=65536, and the containers cannot raise it (no
# CAP_SYS_RESOURCE): only then, lower it with a drop-in.
hard=$(ulimit -Hn)
if [ "$hard" != unlimited ] && [ "$hard" -lt 65536 ]; then
  for root in "$root_a" "$root_b"; do
    for unit in gtmesh-decider.service gtmesh-agent@.service; do
      mkdir -p "$root/etc/systemd/system/$unit.d"
      printf '[Service]\nLimitNOFILE=%s\n' "$hard" > "$root/etc/systemd/system/$unit.d/sandbox-limits.conf"
    done
  done
  echo "note: LimitNOFILE lowered to this machine's hard limit ($hard) by a drop-in"
fi

# Two hosts joined by a veth pair.
ip netns add "$ns_a" && ip netns add "$ns_b"
ip link add "va$tag" type veth peer name "vb$tag"
ip link set "va$tag" netns "$ns_a" && ip link set "vb$tag" netns "$ns_b"
ip -n "$ns_a" addr add "$ip_a/24" dev "va$tag" && ip -n "$ns_a" link set "va$tag" up && ip -n "$ns_a" link set lo up
ip -n "$ns_b" addr add "$ip_b/24" dev "vb$tag" && ip -n "$ns_b" link set "vb$tag" up && ip -n "$ns_b" link set lo up

boot() { # a|b ROOT NETNS
  systemd-nspawn -q -D "$2" --register=no --keep-unit -b --console=read-only --machine="gtm2dc-$1-$tag" \
    --network-namespace-path="/run/netns/$3" > "$work/console-$1.log" 2>&1 &
  nspawn_pid[$1]=$!
  for _ in $(seq 100); do
    leader[$1]=$(pgrep -P "${nspawn_pid[$1]}" -x systemd | head -1)
    [ -n "${leader[$1]}" ] && break
    sleep 0.1
  done
  # systemctl reaches PID 1 once it listens on its private socket; until
  # then it fails at once. --wait then returns when booting is over.
  local state=""
  for _ in $(seq 120); do
    [ -n "${leader[$1]}" ] || break
    state=$(timeout 60 nsenter -t "${leader[$1]}" -m -u -i -n -p -r -w systemctl is-system-running --wait 2>&1)
    [ "$state" = running ] || [ "$state" = degraded ] && break
    sleep 0.5
  done
  check $([ "$state" = running ] || [ "$state" = degraded ] && echo 0 || echo 1) \
    "machine $1 boots systemd as PID 1 (${state:-no answer})"
}
on() { local m=$1; shift; nsenter -t "${leader[$m]}" -m -u -i -n -p -r -w "$@"; }
prop() { on "$1" systemctl show "$2" -p "$3" --value; } # a|b UNIT PROPERTY
boot a "$root_a" "$ns_a"
boot b "$root_b" "$ns_b"
[ -n "${leader[a]:-}" ] && [ -n "${leader[b]:-}" ] || { tail -20 "$work"/console-*.log; exit 1; }

# The operator's machine: the cluster CA and one certificate per node.
tls=$work/operator-tls
"$ctl" ca init --dir "$tls" --cluster two-dc > /dev/null &&
  "$ctl" ca issue decider-a --role decider --dir "$tls" > /dev/null &&
  "$ctl" ca issue fra-agent --role agent --dc fra --dir "$tls" > /dev/null &&
  "$ctl" ca issue ams-agent --role agent --dc ams --dir "$tls" > /dev/null &&
  "$ctl" ca issue operator --role operator --dir "$tls" > /dev/null
check $? "gtmeshctl ca makes the CA and the decider, agent and operator certificates"
operator=(--decider "$ip_a:7400" --tls-ca "$tls/ca.pem" --tls-cert "$tls/operator.pem" --tls-key "$tls/operator.key")

# The cluster config: ams is the primary DC, fra the secondary; each DC's
# backend is a `gtmesh backend` on its own machine.
cat > "$work/cluster.yaml" <<EOF
cluster: {name: two-dc}
measurement: {host_interval: 1s, service_interval: 1s, client_interval: 2s, stale_after: 3}
datacenters:
  - {name: fra, location: {lat: 50.1, lon: 8.7}, access_points: {wan: ["$ip_a:8080"], lan: ["$ip_a:8080"]}}
  - {name: ams, location: {lat: 52.4, lon: 4.9}, access_points: {wan: ["$ip_b:8080"], lan: ["$ip_b:8080"]}}
services:
  - name: web
    probe: {protocol: http, path: /health, interval: 1s, timeout: 500ms, unhealthy_threshold: 2, match: {body: OK}}
    backends:
      fra: ["$ip_a:8080"]
      ams: ["$ip_b:8080"]
zones:
  - name: two-dc.test
    soa: {primary: ns1.two-dc.test., admin: hostmaster.two-dc.test., minimum: 5}
    ns: [ns1.two-dc.test.]
    records:
      - {name: ns1, type: A, answers: [$ip_a]}
      - {name: www, type: A, ttl: 5, profile: web}
profiles:
  - name: web
    method: priority
    fail_safe: [192.0.2.250]
    endpoints:
      - {name: primary, kind: dc, dc: ams, service: web, answers: [198.51.100.30]}
      - {name: secondary, kind: dc, dc: fra, service: web, answers: [192.0.2.30]}
EOF
"$build/tools/gtmesh" check-config "$work/cluster.yaml" > "$work/check-config.log" 2>&1
check $? "the cluster config is valid" || cat "$work/check-config.log"

# The backends, as transient units of each machine's systemd.
on a systemd-run --quiet --unit=backend /usr/bin/gtmesh backend --listen "$ip_a:8080" --name fra --down-file /run/backend-down
on b systemd-run --quiet --unit=backend /usr/bin/gtmesh backend --listen "$ip_b:8080" --name ams --down-file /run/backend-down

# Machine A: the decider. The operator copies its certificate and the
# config, edits decider.env, and starts the unit.
mkdir -p "$root_a/etc/gtmesh/tls"
cp "$tls/ca.pem" "$tls/decider-a.pem" "$tls/decider-a.key" "$root_a/etc/gtmesh/tls/"
cp "$work/cluster.yaml" "$root_a/etc/gtmesh/gtmesh.yaml"
cat > "$root_a/etc/gtmesh/decider.env" <<EOF
NAME=decider-a
LISTEN=$ip_a:7400
PEERS=""
TLS="--tls-ca /etc/gtmesh/tls/ca.pem --tls-cert /etc/gtmesh/tls/decider-a.pem --tls-key /etc/gtmesh/tls/decider-a.key"
COOKIES=""
HTTP="--http 127.0.0.1:9464"
EOF
on a chgrp -R gtmesh /etc/gtmesh && on a chmod -R g+rX,o-rwx /etc/gtmesh
on a systemctl enable --now gtmesh-decider > "$work/decider-start.log" 2>&1
check $? "systemctl enable --now gtmesh-decider returns once the decider is ready" || {
  cat "$work/decider-start.log"; on a journalctl -u gtmesh-decider --no-pager | tail -20; }
# Ready means serving: DNS answers from the first query after start returned.
answer=$(ip netns exec "$ns_a" dig @"$ip_a" ns1.two-dc.test A +short +time=1 +tries=1 2>&1)
check $([ "$answer" = "$ip_a" ] && echo 0 || echo 1) "the decider answers DNS on port 53 as soon as it is ready: ${answer:-nothing}"
type=$(prop a gtmesh-decider Type) state=$(prop a gtmesh-decider ActiveState) pid=$(prop a gtmesh-decider MainPID)
check $([ "$type" = notify ] && [ "$state" = active ] && echo 0 || echo 1) "gtmesh-decider is a Type=notify unit, $state"
user=$(on a stat -c %U "/proc/$pid" 2>/dev/null)
caps=$(on a grep -E '^Cap(Eff|Bnd):' "/proc/$pid/status" 2>/dev/null | awk '{print $2}' | tr '\n' ' ')
check $([ "$user" = gtmesh ] && [ "$caps" = "0000000000000400 0000000000000400 " ] && echo 0 || echo 1) \
  "the decider runs as gtmesh with only CAP_NET_BIND_SERVICE (user ${user:-?}, CapEff/CapBnd $caps)"
ro=$(on a nsenter -t "$pid" -m sh -c 'touch /etc/gtmesh/x 2>&1; touch /var/lib/gtmesh/probe && rm /var/lib/gtmesh/probe && echo writable-state')
check $(echo "$ro" | grep -q "Read-only file system" && echo "$ro" | grep -q writable-state && echo 0 || echo 1) \
  "ProtectSystem=strict holds in the running decider: /etc is read-only, /var/lib/gtmesh writable"

# Each machine enrols its DC in one step with the files the operator gave it.
enroll() { # a|b DC NODE
  local root=$root_a; [ "$1" = b ] && root=$root_b
  mkdir -p "$root/root/enroll"
  cp "$tls/ca.pem" "$tls/$3.pem" "$tls/$3.key" "$root/root/enroll/"
  on "$1" gtmeshctl --decider "$ip_a:7400" --tls-ca /root/enroll/ca.pem --tls-cert "/root/enroll/$3.pem" \
    --tls-key "/root/enroll/$3.key" enroll "$2" > "$work/enroll-$2.log" 2>&1
  check $? "machine $1: gtmeshctl enroll $2 writes the env file and starts gtmesh-agent@$2" || cat "$work/enroll-$2.log"
  sed 's/^/     /' "$work/enroll-$2.log"
  local state
  state="$(prop "$1" "gtmesh-agent@$2" Type) $(prop "$1" "gtmesh-agent@$2" ActiveState)"
  check $([ "$state" = "notify active" ] && echo 0 || echo 1) "gtmesh-agent@$2 is a Type=notify unit, active ($state)"
}
enroll a fra fra-agent
enroll b ams ams-agent
mode=$(on b stat -c '%a %U:%G' /etc/gtmesh/agent-ams.env /etc/gtmesh/tls/ams-agent.key | tr '\n' ' ')
check $([ "$mode" = "640 root:gtmesh 640 root:gtmesh " ] && echo 0 || echo 1) "the enrolled env file and key are 0640 root:gtmesh ($mode)"

# A's decider routes on B's measurements: ams (primary) while its backend
# is up, fra once it is down, ams again when it is back.
dig_www() { ip netns exec "$ns_a" dig @"$ip_a" www.two-dc.test A +short +time=1 +tries=1 2>/dev/null; }
wait_answer() { # expected seconds
  local a=""
  for _ in $(seq $(($2 * 5))); do
    a=$(dig_www)
    [ "$a" = "$1" ] && break
    sleep 0.2
  done
  echo "$a"
}
answer=$(wait_answer 198.51.100.30 30)
check $([ "$answer" = 198.51.100.30 ] && echo 0 || echo 1) "A's DNS answers with ams, the primary, measured from machine B: ${answer:-nothing}"
ip netns exec "$ns_a" "$ctl" "${operator[@]}" status > "$work/status.log" 2>&1
check $? "gtmeshctl status with an operator certificate"
grep -Eq "dc ams: host up .*1 agent\(s\) connected" "$work/status.log" &&
  grep -Eq "dc fra: host up .*1 agent\(s\) connected" "$work/status.log"
check $? "status shows both DCs up, each with its agent connected" || cat "$work/status.log"
on b touch /run/backend-down
answer=$(wait_answer 192.0.2.30 30)
check $([ "$answer" = 192.0.2.30 ] && echo 0 || echo 1) "ams's backend down on machine B: A answers with fra: ${answer:-nothing}"
on b rm -f /run/backend-down
answer=$(wait_answer 198.51.100.30 30)
check $([ "$answer" = 198.51.100.30 ] && echo 0 || echo 1) "ams's backend back: A answers with ams again: ${answer:-nothing}"

# Restart=on-failure: systemd brings back an agent killed with SIGKILL.
before=$(prop b gtmesh-agent@ams MainPID)
on b systemctl kill -s KILL gtmesh-agent@ams
for _ in $(seq 100); do
  active=$(prop b gtmesh-agent@ams ActiveState) mainpid=$(prop b gtmesh-agent@ams MainPID)
  [ "$active" = active ] && [ "$mainpid" != "$before" ] && [ "$mainpid" != 0 ] && break
  sleep 0.2
done
restarts=$(prop b gtmesh-agent@ams NRestarts)
check $([ "$active" = active ] && [ "$mainpid" != "$before" ] && [ "${restarts:-0}" -ge 1 ] && echo 0 || echo 1) \
  "systemd restarts gtmesh-agent@ams after SIGKILL ($active, main pid $before -> $mainpid, $restarts restart(s))"

# A restart of the decider returns when it is ready again: DNS answers at once.
on a systemctl restart gtmesh-decider
answer=$(ip netns exec "$ns_a" dig @"$ip_a" ns1.two-dc.test A +short +time=1 +tries=1 2>&1)
check $([ "$answer" = "$ip_a" ] && echo 0 || echo 1) "after systemctl restart gtmesh-decider returns, DNS answers: ${answer:-nothing}"

# systemctl reload: SIGHUP reads the TLS files again; the decider keeps
# running (same main pid) and answering (SIGHUP used to end it).
before=$(prop a gtmesh-decider MainPID)
on a systemctl reload gtmesh-decider
reloaded=$(for i in $(seq 1 50); do
  on a journalctl -u gtmesh-decider --no-pager 2>/dev/null | grep -q "SIGHUP: the TLS files were read again" && { echo yes; break; }
  sleep 0.1; done)
answer=$(ip netns exec "$ns_a" dig @"$ip_a" ns1.two-dc.test A +short +time=1 +tries=1 2>&1)
check $([ "$reloaded" = yes ] && [ "$(prop a gtmesh-decider MainPID)" = "$before" ] && [ "$answer" = "$ip_a" ] && echo 0 || echo 1) \
  "systemctl reload gtmesh-decider reads the TLS files again, same main pid, DNS answers: ${answer:-nothing}"

if [ "$failures" != 0 ]; then
  for m in a b; do echo "--- journal of machine $m"; on "$m" journalctl --no-pager -n 40 -u 'gtmesh*' 2>&1; done
fi
[ "$failures" = 0 ] && echo "all checks passed" || echo "$failures check(s) failed"
[ "$failures" = 0 ]
