#!/usr/bin/env bash
# Runs the tests by their tags (Tests/BlurfarmTestSupport/Tags.swift): by default the fast
# ones, which carry none of .process, .slurm, .browser and .root (the library's own tests, in
# the test process alone: no blurfarm, no server, no Slurm, no Chromium, no root).
#
#   scripts/fast-tests.sh                          the fast tests
#   scripts/fast-tests.sh --skip-tags slurm,root   every test but those tagged .slurm or .root
#   scripts/fast-tests.sh --only-tags browser      only the tests tagged .browser
#   scripts/fast-tests.sh --skip-build ...         without building first
#
# Other arguments go to `swift test` (e.g. --filter BlurfarmKernelsTests). Why a script:
# `swift test --filter tag:NAME` is not in this toolchain's Swift Testing (6.3.1: it reads
# every --filter as a regular expression over test names). So the script asks the built test
# bundle which tests carry which tags (its event stream, which names each test's and suite's
# tags), and gives `swift test` one --skip (or --filter) per tagged suite or test: the tags in
# the code stay the one place that says what a test needs.
set -euo pipefail
cd "$(dirname "$0")/.."

skip_tags=process,slurm,browser,root
only_tags=
build=1
passed=()
while [ $# -gt 0 ]; do
    case $1 in
    --skip-tags) skip_tags=$2; only_tags=; shift 2 ;;
    --only-tags) only_tags=$2; skip_tags=; shift 2 ;;
    --skip-build) build=0; shift ;;
    *) passed+=("$1"); shift ;;
    esac
done

if [ "$build" = 1 ]; then swift build --build-tests; fi
bundle=$(swift build --show-bin-path)/blurfarmPackageTests.xctest
[ -x "$bundle" ] || { echo "fast-tests.sh: no test bundle at $bundle: build the tests first" >&2; exit 2; }

events=$(mktemp)
arguments=$(mktemp)
trap 'rm -f "$events" "$arguments"' EXIT
# The experimental fields of the event stream are the ones that carry the tags ("_tags").
SWT_EXPERIMENTAL_EVENT_STREAM_FIELDS_ENABLED=1 "$bundle" --testing-library swift-testing --list-tests \
    --event-stream-output-path "$events" > /dev/null

python3 - "$events" "$skip_tags" "$only_tags" > "$arguments" <<'EOF'
import json, re, sys

events, skip, only = sys.argv[1], set(filter(None, sys.argv[2].split(","))), set(filter(None, sys.argv[3].split(",")))
tagged = {}  # the name (module.Suite[/test()]) of each suite or test that carries tags of its own
count = 0
for line in open(events):
    record = json.loads(line)
    if record.get("kind") != "test":
        continue
    test = record["payload"]
    count += 1
    name = test["id"]
    if test["kind"] == "function":
        name = name.rsplit("/", 1)[0]  # without its source location
    tags = {tag.lstrip(".") for tag in test.get("_tags", test.get("tags", []))}
    if tags:
        tagged[name] = tags
if count == 0:
    sys.exit("fast-tests.sh: the test bundle listed no test")
if not tagged:
    sys.exit("fast-tests.sh: the test bundle named no tag (its event stream has no _tags field?)")
chosen = sorted(name for name, tags in tagged.items() if tags & (only or skip))
if only and not chosen:
    sys.exit(f"fast-tests.sh: no test is tagged {', '.join(sorted(only))}")
option = "--filter" if only else "--skip"
for name in chosen:
    print(option)
    print("^" + re.escape(name) + "(/|$)")
EOF
mapfile -t selection < "$arguments"

exec swift test --skip-build "${selection[@]}" "${passed[@]}"
