#!/usr/bin/env bash
# Runs every Fuzz target of the module for FUZZTIME each (default 1m), or
# only the targets whose name matches the regular expression FUZZ:
#   FUZZTIME=10s FUZZ='Trace|Render' ./scripts/fuzz.sh
# Targets are found in the packages whose _test.go files declare a
# func FuzzX. `go test` (make test) already runs each target's seed corpus
# as a normal test; this explores beyond it. New failing inputs land in the
# package's testdata/fuzz/<Target>/ and then fail `make test` until fixed.
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime="${FUZZTIME:-1m}"
filter="${FUZZ:-.}"
status=0
ran=0
for dir in $(grep -rl --include='*_test.go' '^func Fuzz' . | xargs -n1 dirname | sort -u); do
  pkg=$(go list "$dir")
  for target in $(go test -list '^Fuzz' "$pkg" | grep '^Fuzz' | grep -E -- "$filter" || true); do
    echo "== $pkg $target ($fuzztime)"
    ran=$((ran + 1))
    if ! go test -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" "$pkg"; then
      status=1
    fi
  done
done
if [ "$ran" -eq 0 ]; then
  echo "no fuzz target matches FUZZ=$filter" >&2
  exit 1
fi
exit $status
