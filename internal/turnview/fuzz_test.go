package turnview

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzScanner holds the streaming reader to encoding/json: a line is
// read as valid exactly when json.Valid says it is, and a string decodes
// to what json.Unmarshal decodes (for valid UTF-8; the reader passes other
// bytes through for the page to show escaped, where encoding/json
// replaces them).
func FuzzScanner(f *testing.F) {
	for _, s := range []string{`{"a":1}`, `{"metadata":{"conversation_id":"c","turn_index":2},"payload":{"messages":[{"role":"user","content":"x"}]}}`,
		`"\u00e9\ud83d\ude00\ud800\udc00\ud800x\\"`, `[1,-0.5e+7,true,false,null,{}]`, `{"a" : [ ] , "b" : { } }`, `01`, `-`, `1.`, `1e`,
		`"\q"`, `{"a":1,}`, `[1 2]`, `tru`, `"a` + "\t" + `b"`, " \t{}\r", `{"`, `[[[[]]]]`, `"\/\b\f\n\r\t"`, `1E-0`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		if strings.ContainsRune(line, '\n') {
			return // a line's end: another record
		}
		s := newScanner(context.Background(), strings.NewReader(line+"\n"), "f")
		more, err := s.begin()
		if err != nil {
			t.Fatal(err)
		}
		if !more {
			if strings.Trim(line, " \t\r") != "" {
				t.Fatalf("%q read as blank", line)
			}
			return
		}
		first, _ := s.peek()
		err = s.value(nil)
		if err == nil {
			err = s.end()
		}
		if valid := json.Valid([]byte(line)); (err == nil) != valid {
			t.Fatalf("%q: valid %v, read with error %v", line, valid, err)
		}
		if err != nil || first != '"' || !utf8.ValidString(line) {
			return
		}
		var want string
		if err := json.Unmarshal([]byte(line), &want); err != nil {
			t.Fatal(err)
		}
		got := newText(len(line)+1, false)
		s = newScanner(context.Background(), strings.NewReader(line+"\n"), "f")
		if _, err := s.begin(); err != nil {
			t.Fatal(err)
		}
		if err := s.str(got); err != nil {
			t.Fatal(err)
		}
		if got.String() != want {
			t.Fatalf("%q decoded to %q, encoding/json to %q", line, got.String(), want)
		}
	})
}

// FuzzBuild reads any export: it is refused or rendered, never a panic,
// and no text of it becomes markup of the page.
func FuzzBuild(f *testing.F) {
	f.Add(`{"metadata":{"conversation_id":"<b>","x_correlation_id":"s","turn_index":0},"payload":{"messages":[{"role":"user","content":"<script>x</script>"}]}}`)
	f.Add(`{"payload":{"messages":["a",{"content":[{"type":"<i>"},{"text":"t"}]},{"role":1,"content":{"k":"<p>"}}]}}` + "\n\n{}")
	f.Fuzz(func(t *testing.T, export string) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, RawFile), []byte(export), 0o644); err != nil {
			t.Fatal(err)
		}
		v, err := Build(context.Background(), []string{filepath.Join(dir, RawFile)}, Options{LimitConversations: 3, MaxTurns: 3, ContentCap: 16})
		if err != nil {
			return
		}
		var b strings.Builder
		if err := v.WriteHTML(&b); err != nil {
			t.Fatal(err)
		}
		page := b.String()
		if n := strings.Count(page, "<"); n != strings.Count(layoutPage(t, v), "<") {
			t.Fatalf("%q: the page has %d tags, its layout %d", export, n, strings.Count(layoutPage(t, v), "<"))
		}
	})
}

// layoutPage is v's page with every text of the export replaced by "x":
// its markup alone.
func layoutPage(t *testing.T, v *View) string {
	t.Helper()
	w := *v
	w.Convs = nil
	for _, c := range v.Convs {
		if c.Parent != "" {
			c.Parent = "x"
		}
		c.ID, c.Lane, c.Models = "x", "x", []string{"x"}
		w.Convs = append(w.Convs, c)
	}
	w.Msgs = nil
	for _, m := range v.Msgs {
		m.Role, m.Body = "x", "x"
		w.Msgs = append(w.Msgs, m)
	}
	var b strings.Builder
	if err := w.WriteHTML(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}
