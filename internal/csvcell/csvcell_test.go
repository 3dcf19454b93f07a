package csvcell

import (
	"testing"

	"github.com/stretchr/testify/assert"
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
