#!/usr/bin/env bash
# Runs every Fuzz target of the module for FUZZTIME each (default 10s).
# `go test` (make test) already runs each target's seed corpus as a normal
# test; this explores beyond it. New failing inputs land in the package's
# testdata/fuzz/<Target>/ and then fail `make test` until fixed.
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime="${FUZZTIME:-10s}"
status=0
for pkg in $(go list ./...); do
  for target in $(go test -list '^Fuzz' "$pkg" | grep '^Fuzz' || true); do
    echo "== $pkg $target ($fuzztime)"
    if ! go test -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" "$pkg"; then
      status=1
    fi
  done
done
exit $status
