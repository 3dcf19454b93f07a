# aiperf: build, test, demo, bench. CGO is required by mattn/go-sqlite3.
export CGO_ENABLED := 1
GO      ?= go
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X main.version=$(VERSION)
BIN     := bin

.PHONY: all build test vet lint demo bench bench-pinned bench-go fuzz clean

all: build

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN)/aiperf ./cmd/aiperf
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN)/aiperf-mock-server ./cmd/aiperf-mock-server

# The README's test command: vet, then every test with the race detector (docs/README.md:
# the documentation's runnable blocks are among them).
# Every package's tests with the race detector; cmd/aiperf's end-to-end tests
# (one at a time within a process) are split across 4 processes side by side,
# the longest first by an earlier run's seconds (cmd/aiperf/testdata/test_seconds.tsv).
# The subprocesses the tests start (sweep trials, the docs' commands) run
# the binaries `make build` writes, without the race detector.
test: vet build
	AIPERF_TEST_BIN=$(CURDIR)/$(BIN) $(GO) run ./internal/cmd/testshards -shards 4 -weights cmd/aiperf/testdata/test_seconds.tsv -- -race -count=1 -timeout 30m

vet:
	$(GO) vet ./...

# What CI checks besides the tests: formatting, vet and a tidy go.mod.
lint: vet
	@test -z "$$(gofmt -l .)" || { echo "gofmt needed:"; gofmt -l .; exit 1; }
	$(GO) mod tidy -diff

# Every fuzz target for FUZZTIME (default 1m) each, or those matching FUZZ (a
# regexp: make fuzz FUZZ=Trace FUZZTIME=10s); `make test` runs their seed corpora.
fuzz:
	./scripts/fuzz.sh

# A sweep against the built-in mock server, ending in a comparison table.
demo: build
	./scripts/demo.sh

# The client's ceiling against the --fast mock, beside a hand-written baseline:
# first pinned (server and client on a core each), then sharing the machine;
# then the payload encoding cost per request of a chat body carrying an image,
# as a ratio to the same body text-only (docs/multimodal.md).
bench: build
	$(GO) run ./internal/cmd/clientbench -mock $(BIN)/aiperf-mock-server -aiperf $(BIN)/aiperf
	$(GO) test -run '^$$' -bench 'MediaBody$$' -benchmem ./internal/endpoint

# Only the pinned table (docs/performance.md): aiperf and the minimal client
# on one core, the neutral server on the other, at concurrency 1, 64 and 256.
bench-pinned: build
	$(GO) run ./internal/cmd/clientbench -aiperf $(BIN)/aiperf -concurrency '' -rates '' -scrape '' -startup 0 -memory '' -truth ''

# Go micro-benchmarks of the hot paths (SSE reader, client, media bodies and images, a request of the whole path, tokenizer, metrics, store).
bench-go:
	$(GO) test -run '^$$' -bench . -benchmem ./internal/sse ./internal/endpoint ./internal/media ./internal/bench ./internal/load ./internal/metrics ./internal/dataset ./internal/tokenizer ./internal/compare ./store ./starlark

clean:
	rm -rf $(BIN)
