package dataset

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestExtraPromptKeysRefused: a row's extra that holds a request-body key
// carrying the prompt (it would replace the row's text, messages or
// input_length, and the ISL would count a prompt never sent) is refused at
// load, at its line and field, in every format that takes a per-row extra.
func TestExtraPromptKeysRefused(t *testing.T) {
	rows := map[string]struct {
		kind, field string
		row         func(extra string) string
	}{
		"single_turn": {TypeSingleTurn, "extra", func(e string) string { return `{"text":"hi","extra":` + e + `}` }},
		"multi_turn": {TypeMultiTurn, "turns[1].extra", func(e string) string {
			return `{"session_id":"s","turns":[{"text":"a"},{"text":"b","extra":` + e + `}]}`
		}},
		"mooncake input_length": {TypeMooncakeTrace, "extra", func(e string) string {
			return `{"timestamp":0,"input_length":5,"output_length":2,"extra":` + e + `}`
		}},
		"mooncake text_input": {TypeMooncakeTrace, "extra", func(e string) string { return `{"text_input":"hi","extra":` + e + `}` }},
		"mooncake messages": {TypeMooncakeTrace, "extra", func(e string) string {
			return `{"messages":[{"role":"user","content":"hi"}],"extra":` + e + `}`
		}},
	}
	for name, r := range rows {
		for _, k := range promptKeys {
			t.Run(name+"/"+k, func(t *testing.T) {
				path := writeFile(t, "rows.jsonl", r.row(`{"temperature":0.5}`), r.row(fmt.Sprintf(`{"seed":1,%q:[]}`, k)))
				wantOneProblem(t, Options{InputFile: path, CustomType: r.kind}, 2,
					fmt.Sprintf("%s.%s: %q in extra would replace the prompt the row sends", r.field, k, k))
			})
		}
	}
	// Detected from the first row too (the repro: a single_turn row).
	path := writeFile(t, "rows.jsonl", `{"text":"hi","extra":{"messages":[{"role":"user","content":"HIJACK"}]}}`)
	wantOneProblem(t, Options{InputFile: path}, 1, `extra.messages: "messages" in extra would replace the prompt`)
}

// wantOneProblem opens o's file and checks that it fails with one problem,
// at line, whose text names the file and line and contains msg.
func wantOneProblem(t *testing.T, o Options, line int, msg string) {
	t.Helper()
	_, err := Open(context.Background(), o200k(t), o)
	require.Error(t, err)
	les := lineErrors(err)
	require.Len(t, les, 1, "%v", err)
	assert.Equal(t, line, les[0].Line)
	assert.Contains(t, err.Error(), fmt.Sprintf("%s:%d", o.InputFile, line))
	assert.Contains(t, err.Error(), msg)
}

// TestExtraOtherKeysKept: other keys, "stream" among them, are the row's to
// set and reach the turn.
func TestExtraOtherKeysKept(t *testing.T) {
	path := writeFile(t, "rows.jsonl", `{"text":"hi","extra":{"stream":true,"temperature":0.5,"max_prompt":3}}`)
	d, err := Open(context.Background(), o200k(t), Options{InputFile: path})
	require.NoError(t, err)
	defer d.Close()
	c, err := d.Conversation(0)
	require.NoError(t, err)
	assert.Equal(t, true, c.Turns[0].Extra["stream"])
	assert.Contains(t, c.Turns[0].Extra, "max_prompt")
}
