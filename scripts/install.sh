#!/usr/bin/env bash
# Installs blurfarm under a prefix (default /usr/local): the release build, the example
# plugins, the man page and the shell completions. The man page and the completions are
# generated from the argument parser (swift-argument-parser's generate-manual plugin and
# `blurfarm --generate-completion-script`), so they always match the build. Safe to run again.
#
#   bash scripts/install.sh [PREFIX]
#
# Installs:
#   PREFIX/bin/blurfarm
#   PREFIX/libexec/blurfarm/blurfarm-worker                    (the worker processes blurfarm starts)
#   PREFIX/lib/blurfarm/plugins/libvignette.so, libzoom.so   (name the folder in plugin-folders:)
#   PREFIX/share/man/man1/blurfarm.1                          (man blurfarm)
#   PREFIX/share/blurfarm/web/index.html, app.js, style.css   (blurfarm serve's status page)
#   PREFIX/share/bash-completion/completions/blurfarm
#   PREFIX/share/zsh/site-functions/_blurfarm
#   PREFIX/share/fish/vendor_completions.d/blurfarm.fish
set -euo pipefail
prefix=${1:-/usr/local}
cd "$(dirname "$0")/.."

swift build -c release
release=$(swift build -c release --show-bin-path)
swift package generate-manual --configuration release
manual=.build/plugins/GenerateManual/outputs/blurfarm/blurfarm.1

install -D -m 755 "$release/blurfarm" "$prefix/bin/blurfarm"
install -D -m 755 "$release/blurfarm-worker" "$prefix/libexec/blurfarm/blurfarm-worker"
for plugin in libvignette.so libzoom.so; do
  install -D -m 644 "$release/$plugin" "$prefix/lib/blurfarm/plugins/$plugin"
done
install -D -m 644 "$manual" "$prefix/share/man/man1/blurfarm.1"
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
