#!/usr/bin/env bash
# Installs gtmesh on one machine from a build tree: binaries, systemd units
# and the cluster config. Roles are chosen by which units you enable.
#
#   sudo deploy/install.sh BUILD_DIR CONFIG.yaml
#   systemctl enable --now gtmesh-decider            # decider + DNS on :53
#   systemctl enable --now gtmesh-agent@fra          # the agents of DC fra
set -euo pipefail
build=${1:?usage: install.sh BUILD_DIR CONFIG.yaml}
config=${2:?usage: install.sh BUILD_DIR CONFIG.yaml}
here=$(cd "$(dirname "$0")" && pwd)
"$build/tools/gtmesh" check-config "$config"
install -m 0755 "$build/tools/gtmesh" "$build/tools/gtmeshctl" /usr/local/bin/
install -d /etc/gtmesh
install -m 0644 "$config" /etc/gtmesh/gtmesh.yaml
for f in "$here"/configs/*.env; do
  [ -e "/etc/gtmesh/$(basename "$f")" ] || install -m 0644 "$f" /etc/gtmesh/
done
install -m 0644 "$here"/systemd/*.service /etc/systemd/system/
systemctl daemon-reload 2>/dev/null || true
echo "installed; edit /etc/gtmesh/*.env, then enable gtmesh-decider and gtmesh-agent@<dc>"
