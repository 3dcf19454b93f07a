package csvcell

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestText(t *testing.T) {
	for in, want := range map[string]string{
		"":                           "",
		"vllm:num_requests_running":  "vllm:num_requests_running",
		`=HYPERLINK("http://evil/")`: `'=HYPERLINK("http://evil/")`,
		"+1+1":                       "'+1+1",
		"-1+1":                       "'-1+1",
		"@SUM(A1)":                   "'@SUM(A1)",
		"\t=1":                       "'\t=1",
		"\r=1":                       "'\r=1",
		"a=1":                        "a=1",
		" =1":                        " =1",
		"-":                          "-",
		"+12.5%":                     "+12.5%",
		"-%":                         "'-%",
		"+1%+1":                      "'+1%+1",
	} {
		assert.Equal(t, want, Text(in), "%q", in)
	}
}

// TestNumbersStayNumbers: a cell that is a number, signed or not, is left
// as it is: only text is neutralised.
func TestNumbersStayNumbers(t *testing.T) {
	for _, s := range []string{"-1", "+1", "-0.5", "-1e3", "+Inf", "-inf"} {
		assert.Equal(t, s, Text(s))
	}
}

// TestWriter: every cell of every row goes through Text, numbers and
// CRLF as set on the embedded writer.
func TestWriter(t *testing.T) {
	var b strings.Builder
	w := NewWriter(&b)
	w.UseCRLF = true
	require.NoError(t, w.Write([]string{"metric", "=cmd|' /C calc'!A0", "-1"}))
	require.NoError(t, w.WriteAll([][]string{{"@SUM(A1)", "+12.5%", "n/a"}}))
	assert.Equal(t, "metric,'=cmd|' /C calc'!A0,-1\r\n'@SUM(A1),+12.5%,n/a\r\n", b.String())
}
