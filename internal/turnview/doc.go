// Package turnview writes `aiperf analyze turn-messages`: one
// self-contained HTML file showing, conversation by conversation and turn
// by turn, the input messages a run sent, read from its raw export
// (profile_export_raw.jsonl, `aiperf profile --export-level raw`), as
// AIPerf's viewer of the same name. Conversations are grouped by
// conversation_id (a conversation replayed by several sessions shows once
// per session, as AIPerf's "replay N"), roots first, then by their earliest
// request; branches of a dag_jsonl run name their parent.
//
// Every turn re-sends the conversation so far, so a message body is kept
// and shown once, where it first appears; a later turn that sends it again
// links to it. What is kept is bounded, whatever the export holds: the
// file is read twice, a line at a time through a fixed buffer by a
// streaming JSON reader that keeps only what is shown (a line of any
// length costs no more memory than a short one): first the records'
// metadata, to choose and order the conversations, then the messages of
// the turns shown, each unique body cut at the content cap.
//
// The page makes no request of any kind (its Content-Security-Policy
// allows its own inline style and script only): collapsing is <details>
// elements, the small script only opens the sections around a linked
// message. Every text from the export (message bodies, roles, ids, model
// names) is HTML-escaped by html/template, with control and bidirectional
// characters shown escaped as the terminal shows them (package termsafe).
package turnview
