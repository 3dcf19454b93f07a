// Package sse reads Server-Sent Events (the text/event-stream format) from a
// byte stream. It knows nothing about OpenAI: it splits the stream into events,
// joins their data lines and stamps each event with the moment its first line
// came off the wire, taken from an injected clock.
//
// The reader is lenient where real inference servers differ from the WHATWG
// specification: "data:" with or without a space, CRLF, LF or lone CR line
// endings, comment lines, trailing spaces (TensorRT-LLM writes "data: {…} "),
// several data lines per event and lines of any length.
//
// Lines are read up to LF (bufio.Reader.ReadSlice); a lone CR inside what was
// read also ends a line, so CR-only streams parse correctly, but their events
// are delivered (and stamped) only when the next LF or the end of the stream
// arrives. No known inference server writes CR-only streams.
package sse
