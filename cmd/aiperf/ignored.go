package main

import (
	"fmt"
	"io"
)

// AIPerfIgnored are AIPerf profile options for the parts of AIPerf that
// have no counterpart in this one Go process (its services, their ZMQ
// bus, their API, a Python tokenizer's code). They are accepted, so that
// AIPerf's command lines run as they are, and ignored with a note; a
// config file's runtime keys of the same kind are ignored the same way.
type AIPerfIgnored struct {
	TrustRemoteCode  bool     `name:"tokenizer-trust-remote-code" hidden:"" help:"AIPerf's: ignored (tokenizers here are data files; no repository code runs)."`
	RecordProcessors *int     `name:"record-processor-service-count" aliases:"record-processors" hidden:"" help:"AIPerf's: ignored."`
	ZMQHost          string   `name:"zmq-host" hidden:"" help:"AIPerf's: ignored."`
	ZMQIPCPath       string   `name:"zmq-ipc-path" hidden:"" help:"AIPerf's: ignored."`
	APIHost          string   `name:"api-host" hidden:"" help:"AIPerf's: ignored."`
	APIPort          *int     `name:"api-port" hidden:"" help:"AIPerf's: ignored."`
	StatsInterval    *float64 `name:"stats-interval" hidden:"" help:"AIPerf's: ignored."`
}

// note writes a line for each ignored option that was given.
func (a *AIPerfIgnored) note(w io.Writer) {
	for _, o := range []struct {
		set       bool
		flag, why string
	}{
		{a.TrustRemoteCode, "--tokenizer-trust-remote-code", "lets AIPerf run a Hugging Face repository's Python tokenizer code; " +
			"tokenizers here are read from their data files (tokenizer.json) and run no code"},
		{a.RecordProcessors != nil, "--record-processor-service-count", "sizes AIPerf's record-processor services; records are processed in this one process"},
		{a.ZMQHost != "" || a.ZMQIPCPath != "", "--zmq-host/--zmq-ipc-path", "configure AIPerf's ZMQ bus between its services; this client is one process (workers talk over pipes)"},
		{a.APIHost != "" || a.APIPort != nil, "--api-host/--api-port", "serve AIPerf's service API; live metrics are served here with --metrics-listen"},
		{a.StatsInterval != nil, "--stats-interval", "paces AIPerf's realtime stats log; the progress display here has its own"},
	} {
		if o.set {
			fmt.Fprintf(w, "note: %s %s: ignored\n", o.flag, o.why)
		}
	}
}
