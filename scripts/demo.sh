#!/usr/bin/env bash
# make demo: start the built-in mock server on a free port, run the demo sweep
# against it (every trial a subprocess with its own KV reset), then compare.
set -euo pipefail
cd "$(dirname "$0")/.."

BIN=${BIN:-bin}
WORK=${DEMO_DIR:-artifacts/demo}
mkdir -p "$WORK"
LOG="$WORK/mock-server.log"
# The runs go to the store every aiperf command reads by default
# (artifacts/aiperf.db, or $AIPERF_STORE), so the commands printed here
# (`bin/aiperf compare --sweep demo`, ...) work afterwards as printed. Each demo starts afresh:
# aiperf refuses to run a new sweep over the trial directories of an
# earlier one, so the previous demo's directories go (its runs stay in the
# store; a name means its latest sweep).
rm -rf "$WORK/demo" "$WORK/demo-slow" "$WORK/plots" "$WORK/report.html"

# start_mock LOG FLAGS...: starts a mock server on a free port and sets URL.
PIDS=()
trap 'kill "${PIDS[@]}" 2>/dev/null || true' EXIT
start_mock() {
  local log=$1 url=""
  shift
  "$BIN/aiperf-mock-server" --port 0 "$@" >"$log" 2>&1 &
  PIDS+=($!)
  for _ in $(seq 1 100); do
    url=$(grep -o 'http://[0-9.:]*' "$log" | head -1 || true)
    [ -n "$url" ] && break
    sleep 0.1
  done
  if [ -z "$url" ]; then
    echo "demo: the mock server did not start:" >&2
    cat "$log" >&2
    exit 1
  fi
  URL=$url
}
start_mock "$LOG" --ttft 20 --itl 2
echo "demo: mock server at $URL (log: $LOG)"

"$BIN/aiperf" plan examples/demo.star --set url="$URL"
"$BIN/aiperf" sweep examples/demo.star --set url="$URL" --artifact-dir "$WORK"
echo
echo "demo: KV-cache resets the mock server received (one per trial subprocess):"
curl -s "$URL/mock/control" | grep -o '"reset_count":[0-9]*' || true
echo "demo: each trial's own check of its reset (from the server's cached-token counts):"
grep -h "KV cache reset" "$WORK"/demo/*/trial_*/aiperf.log | sed 's/:.*//' | sort | uniq -c
echo
echo "demo: is concurrency 4 slower per request than concurrency 1 beyond run-to-run noise?"
echo "  $BIN/aiperf compare demo/concurrency_1__synthetic_input_tokens_mean_128 demo/concurrency_4__synthetic_input_tokens_mean_128"
"$BIN/aiperf" compare demo/concurrency_1__synthetic_input_tokens_mean_128 demo/concurrency_4__synthetic_input_tokens_mean_128

# The same sweep against a server three times slower to its first token,
# then both drawn: their Pareto fronts overlaid, and one HTML report.
start_mock "$WORK/mock-server-slow.log" --ttft 60 --itl 2
echo
echo "demo: the same sweep against a slower server (--ttft 60) at $URL"
"$BIN/aiperf" sweep examples/demo.star --set url="$URL" --set name=demo-slow --artifact-dir "$WORK" --ui none >/dev/null
echo
echo "demo: figures of both sweeps (Pareto fronts overlaid), and one HTML report:"
echo "  $BIN/aiperf plot --sweep demo --sweep demo-slow -o $WORK/plots"
"$BIN/aiperf" plot --sweep demo --sweep demo-slow -o "$WORK/plots"
echo "  $BIN/aiperf report --sweep demo --sweep demo-slow -o $WORK/report.html"
"$BIN/aiperf" report --sweep demo --sweep demo-slow -o "$WORK/report.html"
echo "demo: open $WORK/report.html in a browser (one file, works offline); the figures are in $WORK/plots/"
echo
echo "demo: the runs stay in the store (${AIPERF_STORE:-artifacts/aiperf.db}); afterwards, from the repository root:"
echo "  $BIN/aiperf compare --sweep demo                     # the sweep's table again"
echo "  $BIN/aiperf compare --sweep demo --sweep demo-slow   # the two sweeps, cell by cell"
echo "  $BIN/aiperf runs sweeps                              # every stored sweep"
echo "demo: or put $BIN on your PATH and drop the prefix: export PATH=\"$(cd "$BIN" && pwd):\$PATH\""
