package main

// AnalyzeCmd is AIPerf's `aiperf analyze` group: views of a finished run's
// artifact directories (analyze-trace, which reads a trace, stays a
// command of its own, as in AIPerf).
type AnalyzeCmd struct {
	SwimLane     SwimLaneCmd     `cmd:"" name:"swim-lane" help:"Draw each session of a run as a swim lane of its requests, with the client's concurrency curve underneath (PNG)."`
	TurnMessages TurnMessagesCmd `cmd:"" name:"turn-messages" help:"Write a collapsible HTML viewer of each conversation's per-turn input messages (needs --export-level raw)."`
}
