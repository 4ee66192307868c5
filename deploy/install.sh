#!/usr/bin/env bash
# Installs gtmesh on this machine from a build tree, through its Debian
# package (docs/deploy.md), and puts CONFIG.yaml in /etc/gtmesh/gtmesh.yaml.
# Roles are chosen by which units you enable. As root:
#
#   deploy/install.sh BUILD_DIR CONFIG.yaml
#   systemctl enable --now gtmesh-decider            # decider + DNS on :53
#   systemctl enable --now gtmesh-agent@fra          # the agents of DC fra
set -euo pipefail
build=${1:?usage: install.sh BUILD_DIR CONFIG.yaml}
config=${2:?usage: install.sh BUILD_DIR CONFIG.yaml}
"$build/tools/gtmesh" check-config "$config"
cmake --build "$build" --target package
deb=$(ls -t "$build"/gtmesh_*_amd64.deb | head -1)
apt-get install -y "$deb"
install -m 0640 -g gtmesh "$config" /etc/gtmesh/gtmesh.yaml
echo "installed $(basename "$deb"); edit /etc/gtmesh/decider.env or write /etc/gtmesh/agent-DC.env" \
     "(example: /usr/share/doc/gtmesh/examples/agent-fra.env), then enable gtmesh-decider or gtmesh-agent@DC"
