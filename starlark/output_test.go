package starlark_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/aiperf-go/aiperf/starlark"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPrintEscapedAndRedacted: print() neither drives the terminal (an
// OSC 52 clipboard write, a screen clear) nor shows a secret a profile of
// the script holds, though the script can read it back (base.api_key);
// fail()'s message does not show it either.
func TestPrintEscapedAndRedacted(t *testing.T) {
	t.Parallel()
	src := `base = profile(model = "m", api_key = "sk-STARSECRET1", url = "http://user:pa55word@127.0.0.1:19380",
    header = ["X-Api-Key: hdr-SECRET-42"])
print("key=" + base.api_key + " \x1b]52;c;cHduZWQ=\x07\x1b[2J\r")
print("url=" + base.url[0] + " header=" + base.header[0] + "\nsecond line\tx")
fail("key=" + base.api_key + "\x1b[2J")
`
	var got []string
	_, err := loadFiles(t, map[string]string{"sweeps.star": src}, starlark.Options{Print: func(msg string) { got = append(got, msg) }})
	errs := scriptErrors(t, err)
	require.Len(t, errs, 1)
	require.Len(t, got, 2)
	for _, s := range append(got, errs[0].Error()) {
		assert.NotContains(t, s, "\x1b", s)
		assert.NotContains(t, s, "\x07", s)
		assert.NotContains(t, s, "\r", s)
		for _, secret := range []string{"sk-STARSECRET1", "pa55word", "hdr-SECRET-42"} {
			assert.NotContains(t, s, secret, s)
		}
	}
	assert.Equal(t, `key=<redacted> \x1b]52;c;cHduZWQ=\x07\x1b[2J\r`, got[0])
	assert.Contains(t, got[1], "\nsecond line\tx", "a print keeps its lines")
	assert.Equal(t, "sweeps.star:5:5", errs[0].Pos)
	assert.Equal(t, `key=<redacted>\x1b[2J`, errs[0].Msg)
}

// TestPrintBounded: print() writes at most MaxPrintLine a call and
// MaxPrintBytes in all, then says how much it left out: a loop printing
// a 16 MB string used to write 2.5 GB (before the step limit stopped it).
func TestPrintBounded(t *testing.T) {
	t.Parallel()
	src := `s = "x" * 16000000
def f():
    for i in range(100):
        print(s)
f()
print("small")
sweep(name = "a", base = profile(model = "m"))
`
	var got []string
	total := 0
	loadScript(t, src, starlark.Options{Print: func(msg string) { got = append(got, msg); total += len(msg) + 1 }})
	require.NotEmpty(t, got)
	assert.LessOrEqual(t, total, starlark.MaxPrintBytes+1024, "the bound, and the two lines that say what was left out")
	cut := fmt.Sprintf(" [%d more bytes left out]", 16000000-starlark.MaxPrintLine)
	assert.Equal(t, strings.Repeat("x", starlark.MaxPrintLine)+"…"+cut, got[0])
	n := starlark.MaxPrintBytes / (starlark.MaxPrintLine + len("…") + len(cut) + 1) // the lines that fit
	require.Len(t, got, n+2)
	assert.Contains(t, got[n], "the most it may; the rest is left out")
	assert.Equal(t, fmt.Sprintf("print: %d lines (%d bytes) left out past the %d bytes a script may print",
		100-n+1, (100-n)*16000001+len("small\n"), starlark.MaxPrintBytes), got[n+1])
}

// TestPrintWithheldPastSecrets: once the script's profiles hold more
// secrets than print() can afford to redact, its lines are left out, not
// shown unredacted.
func TestPrintWithheldPastSecrets(t *testing.T) {
	t.Parallel()
	src := `ps = [profile(model = "m", api_key = "sk-KEY-%d" % i) for i in range(300)]
print(ps[299].api_key)
sweep(name = "a", base = ps[0])
`
	var got []string
	loadScript(t, src, starlark.Options{Print: func(msg string) { got = append(got, msg) }})
	require.Len(t, got, 1)
	assert.Contains(t, got[0], "print: 1 lines (11 bytes) left out: the script's profiles hold more than 256 secrets")
}

// TestPrintBeforeTheProfileRedacted: a line printed before the profile
// that holds its secret is built is redacted too (print() lines are held
// until the script has loaded), and the lines keep their order.
func TestPrintBeforeTheProfileRedacted(t *testing.T) {
	t.Parallel()
	src := `key = "sk-EARLY-SECRET-7"
print("using " + key)
print("second")
sweep(name = "a", base = profile(model = "m", api_key = key))
`
	var got []string
	loadScript(t, src, starlark.Options{Print: func(msg string) { got = append(got, msg) }})
	assert.Equal(t, []string{"using <redacted>", "second"}, got)
}
