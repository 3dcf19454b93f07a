package hooks

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/aiperf-go/aiperf/internal/plan"
)

// maxDetail bounds the excerpt of a failed call's answer kept in its error.
const maxDetail = 200

// readReply reads the answer of a control route. For a 2xx it returns a
// warning when the body is a JSON object whose "success" is false (vLLM's
// reset while requests still hold KV blocks). For any other status it
// returns an excerpt for the error: the message of a JSON error object
// ("message", "detail", "error" or "msg"), else the text, on one line, at
// most maxDetail bytes, every secret rd knows replaced, also one the server
// escaped in JSON.
func readReply(status int, body []byte, rd *plan.Redactor) (warning, detail string) {
	if status >= 200 && status <= 299 {
		return successFalse(status, body), ""
	}
	text := rd.Redact(oneLine(rd.Redact(replyText(body))))
	return "", rd.Redact(truncate(text, maxDetail))
}

// successFalse returns a warning when a 2xx body is a JSON object whose
// "success" is false.
func successFalse(status int, body []byte) string {
	var v struct {
		Success *bool `json:"success"`
	}
	if json.Unmarshal(body, &v) != nil || v.Success == nil || *v.Success {
		return ""
	}
	return fmt.Sprintf(`server answered %d with {"success": false}: it reports the call had no effect `+
		`(vLLM refuses a cache reset while requests still hold KV blocks)`, status)
}

// replyText is the message of a JSON error answer, or the whole body.
func replyText(body []byte) string {
	t := bytes.TrimSpace(body)
	var v map[string]json.RawMessage
	if len(t) > 0 && t[0] == '{' && json.Unmarshal(t, &v) == nil {
		for _, k := range []string{"message", "detail", "error", "msg"} {
			if s := jsonText(v[k]); s != "" {
				return s
			}
		}
	}
	return string(t)
}

// jsonText renders a JSON value as text: a string as is, an object by its
// "message", anything else (a list of FastAPI validation errors, say)
// compactly.
func jsonText(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var obj struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(raw, &obj) == nil && obj.Message != "" {
		return obj.Message
	}
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}

// oneLine makes s valid UTF-8 on a single line: every run of spaces and
// control characters becomes one space.
func oneLine(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	var b strings.Builder
	space := false
	for _, r := range s {
		if unicode.IsSpace(r) || unicode.IsControl(r) {
			space = true
			continue
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		b.WriteRune(r)
	}
	return b.String()
}

// truncate cuts s to at most n bytes on a rune boundary, marking the cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
