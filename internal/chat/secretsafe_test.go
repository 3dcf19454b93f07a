package chat

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/aiperf-go/aiperf/internal/plan"
)

// printSplit prints text through a secretSafe in the pieces the cuts make.
func printSplit(key, text string, cuts ...int) string {
	var out strings.Builder
	p := newSecretSafe(&out, plan.NewRedactor(key), key)
	prev := 0
	for _, c := range cuts {
		p.write(text[prev:c])
		prev = c
	}
	p.write(text[prev:])
	p.flush()
	return out.String()
}

func TestASecretSplitAnywhereIsNeverPrinted(t *testing.T) {
	key := "sk-proj-AbCdEf0123456789"
	for _, text := range []string{
		key,
		"the key " + key + " and " + key + key + ".",
		"a/" + key + "/b?k=" + key,
		"ünïcödé " + key + " ✓",
	} {
		for i := 0; i <= len(text); i++ {
			for j := i; j <= len(text); j++ {
				got := printSplit(key, text, i, j)
				if !assert.NotContains(t, got, key[len(key)-8:], "cut at %d and %d of %q", i, j, text) {
					return
				}
			}
		}
	}
}

func TestTextWithoutSecretsIsPrintedAsItIs(t *testing.T) {
	key := "sk-proj-AbCdEf0123456789"
	text := "nothing secret here, not even sk- or sk-proj, just ünïcödé text ✓ that goes on for a while."
	for i := 0; i <= len(text); i++ {
		assert.Equal(t, text, printSplit(key, text, i), "cut at %d", i)
	}
	var out strings.Builder
	p := newSecretSafe(&out, plan.NewRedactor(""), "")
	p.write("printed at once")
	assert.Equal(t, "printed at once", out.String(), "without secrets nothing is held")
}
