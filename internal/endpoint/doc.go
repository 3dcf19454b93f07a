// Package endpoint sends the requests of every endpoint type AIPerf
// benchmarks (OpenAI chat, completions and embeddings, the Responses API,
// Anthropic Messages, NIM/TEI/Cohere rankings, TGI generate, body templates
// and raw payloads), streaming or not, and measures their responses. Each
// API is a request-body builder and a response decoder beside the OpenAI
// one (formats.go); one HTTP client and one SSE reader serve them all.
//
// A Client never returns a Go error for a request: every failure (HTTP status,
// error frame inside a stream, dropped connection, timeout, cancellation) is
// data in Response.Err, classified the way AIPerf's error summary counts it.
// Streaming responses are read with package sse; each response that carried
// generated text is stamped with the read time of its event, taken from the
// run's injected monotonic clock before any JSON decoding.
package endpoint
