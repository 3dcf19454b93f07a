// Package openai sends OpenAI-compatible /v1/chat/completions and
// /v1/completions requests, streaming or not, and measures their responses.
//
// A Client never returns a Go error for a request: every failure (HTTP status,
// error frame inside a stream, dropped connection, timeout, cancellation) is
// data in Response.Err, classified the way AIPerf's error summary counts it.
// Streaming responses are read with package sse; each response that carried
// generated text is stamped with the read time of its event, taken from the
// run's injected monotonic clock before any JSON decoding.
package openai
