#!/usr/bin/env bash
# make demo: start the built-in mock server on a free port, run the demo sweep
# against it (every trial a subprocess with its own KV reset), then compare.
set -euo pipefail
cd "$(dirname "$0")/.."

BIN=${BIN:-bin}
WORK=${DEMO_DIR:-artifacts/demo}
mkdir -p "$WORK"
STORE="$WORK/aiperf.db"
LOG="$WORK/mock-server.log"
# Each demo starts afresh: aiperf refuses to run a new sweep over the trial
# directories of an earlier one, so the previous demo's sweep and store go.
rm -rf "$WORK/demo" "$STORE" "$STORE-wal" "$STORE-shm"

"$BIN/aiperf-mock-server" --port 0 --ttft 20 --itl 2 >"$LOG" 2>&1 &
MOCK=$!
trap 'kill $MOCK 2>/dev/null || true' EXIT

URL=""
for _ in $(seq 1 100); do
  URL=$(grep -o 'http://[0-9.:]*' "$LOG" | head -1 || true)
  [ -n "$URL" ] && break
  sleep 0.1
done
if [ -z "$URL" ]; then
  echo "demo: the mock server did not start:" >&2
  cat "$LOG" >&2
  exit 1
fi
echo "demo: mock server at $URL (log: $LOG)"

"$BIN/aiperf" --store "$STORE" plan examples/demo.star --set url="$URL"
"$BIN/aiperf" --store "$STORE" sweep examples/demo.star --set url="$URL" --artifact-dir "$WORK"
echo
echo "demo: KV-cache resets the mock server received (one per trial subprocess):"
curl -s "$URL/mock/control" | grep -o '"reset_count":[0-9]*' || true
echo "demo: each trial's own check of its reset (from the server's cached-token counts):"
grep -h "KV cache reset" "$WORK"/demo/*/trial_*/aiperf.log | sed 's/:.*//' | sort | uniq -c
echo
echo "demo: is concurrency 4 slower per request than concurrency 1 beyond run-to-run noise?"
echo "  aiperf --store $STORE compare demo/concurrency_1__synthetic_input_tokens_mean_128 demo/concurrency_4__synthetic_input_tokens_mean_128"
"$BIN/aiperf" --store "$STORE" compare demo/concurrency_1__synthetic_input_tokens_mean_128 demo/concurrency_4__synthetic_input_tokens_mean_128
