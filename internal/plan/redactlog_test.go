package plan

import (
	"bytes"
	"log"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestLogWriterHidesEveryRedactorsSecrets: the standard log's writer hides
// the secrets of a Redactor made after it (a run's integrations start
// late), each URL's userinfo and secret query values, and what was learnt
// (hidden after the rest: its userinfo marker ended the URL of the query).
func TestLogWriterHidesEveryRedactorsSecrets(t *testing.T) {
	forgetLearnt(t)
	var out bytes.Buffer
	l := log.New(LogWriter(&out), "", 0)
	NewRedactor("tok-logwriter-0001")
	AddSecrets("aws-logwriter-0002")
	l.Printf("Unsolicited response starting with %q", "leak: Bearer tok-logwriter-0001 aws-logwriter-0002 "+
		"http://u:pw-logwriter-0003@h/x?api_key=qk-logwriter-0004")
	got := out.String()
	for _, s := range []string{"tok-logwriter-0001", "aws-logwriter-0002", "pw-logwriter-0003", "qk-logwriter-0004"} {
		assert.NotContains(t, got, s)
	}
	assert.Contains(t, got, "leak: Bearer "+Redacted)
	NewRedactor("tok-logwriter-0005") // after the first line: the writer sees it
	l.Print("later tok-logwriter-0005")
	assert.NotContains(t, out.String(), "tok-logwriter-0005")
}
