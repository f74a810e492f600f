#!/usr/bin/env bash
# Installs what blurfarm needs from Debian's packages. Safe to run any number of times:
# it does nothing when everything is already there.
set -euo pipefail

# chromium, chromium-driver and curl: the tests of `blurfarm serve` (its web page in a headless
# browser, its event stream).
packages=(libvips-dev libvips-tools libxxhash-dev pkg-config parallel python3 python3-pip curl chromium chromium-driver)
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

# From PyPI, for the tests of `blurfarm serve`: schemathesis checks the server against
# docs/openapi.yaml; selenium drives chromium over its web page.
if ! python3 -c 'import schemathesis, selenium' 2>/dev/null; then
  python3 -m pip install --quiet "schemathesis>=4.32,<5" "selenium>=4.20,<5" 2>/dev/null \
    || python3 -m pip install --quiet --break-system-packages "schemathesis>=4.32,<5" "selenium>=4.20,<5"
fi
