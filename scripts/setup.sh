#!/usr/bin/env bash
# Installs what blurfarm needs from Debian's packages. Safe to run any number of times:
# it does nothing when everything is already there.
set -euo pipefail

# slurmctld, slurmd, slurm-client and munge: the one-node Slurm of scripts/slurm-local.sh, which
# the Slurm tests stand up (docs/cluster.md); their services are never started by the packages
# here (no systemd), only by that script.
packages=(libvips-dev libvips-tools libxxhash-dev pkg-config parallel python3 slurmctld slurmd slurm-client munge)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done

if ((${#missing[@]})); then
  sudo=""
  [[ $(id -u) -eq 0 ]] || sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

pkg-config --exists libxxhash || { echo "setup: libxxhash-dev was installed but pkg-config cannot find libxxhash.pc" >&2; exit 1; }
pkg-config --exists vips || { echo "setup: libvips was installed but pkg-config cannot find vips.pc" >&2; exit 1; }
