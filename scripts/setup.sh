#!/usr/bin/env bash
# Installs what blurfarm needs from Debian's packages. Safe to run any number of times:
# it does nothing when everything is already there.
set -euo pipefail

# slurmctld, slurmd, slurm-client and munge: the one-node Slurm of scripts/slurm-local.sh, which
# the Slurm tests stand up (docs/cluster.md); their services are never started by the packages
# here (no systemd), only by that script. chromium, chromium-driver and curl: the tests of
# `blurfarm serve` (its web page in a headless browser, its event stream).
packages=(libvips-dev libvips-tools libxxhash-dev pkg-config parallel python3 slurmctld slurmd slurm-client munge
  python3-pip curl chromium chromium-driver)
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

# OpenCV for `blurfarm bench`'s 8-bit comparison (scripts/opencv-bench.py), from PyPI into the
# python3 on the PATH (the one the bench runs). Only the benchmark needs it: a failure is a
# warning, not a failed setup.
if ! python3 -c 'import cv2, numpy' 2>/dev/null; then
  python3 -m pip install --quiet opencv-python-headless 2>/dev/null \
    || python3 -m pip install --quiet --break-system-packages opencv-python-headless \
    || echo "setup: could not install opencv-python-headless; 'blurfarm bench' will leave OpenCV out" >&2
fi

# From PyPI, for the tests of `blurfarm serve`: schemathesis checks the server against
# docs/openapi.yaml; selenium drives chromium over its web page.
if ! python3 -c 'import schemathesis, selenium' 2>/dev/null; then
  python3 -m pip install --quiet "schemathesis>=4.32,<5" "selenium>=4.20,<5" 2>/dev/null \
    || python3 -m pip install --quiet --break-system-packages "schemathesis>=4.32,<5" "selenium>=4.20,<5"
fi
