package main

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/aiperf-go/aiperf/internal/mock"
)

// AIPerf's options for its services and a Python tokenizer's code are
// accepted, so that AIPerf's command lines run as they are, and each is
// noted as ignored; the run is the one it would be without them.
func TestAIPerfServiceOptionsAreIgnoredWithANote(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true})
	inv := cli(t, "", quick(m.URL, "--request-count", "2", "--no-store", "--tokenizer-trust-remote-code",
		"--record-processors", "4", "--zmq-host", "127.0.0.1", "--api-port", "9999", "--stats-interval", "5")...)
	assert.Equal(t, ExitOK, inv.code, inv.stderr)
	for _, flag := range []string{"--tokenizer-trust-remote-code", "--record-processor-service-count", "--zmq-host/--zmq-ipc-path",
		"--api-host/--api-port", "--stats-interval"} {
		assert.Contains(t, inv.stderr, "note: "+flag+" ")
	}
	assert.Contains(t, inv.stdout, "Request Count")
}
