package chat

import (
	"encoding/base64"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/aiperf-go/aiperf/internal/plan"
)

// printSplit prints text through a secretSafe in the pieces the cuts make.
func printSplit(key, text string, cuts ...int) string {
	return printPieces(plan.NewRedactor(key), []string{key}, text, cuts...)
}

// printPieces prints text through a secretSafe with red and secrets, in
// the pieces the cuts make.
func printPieces(red *plan.Redactor, secrets []string, text string, cuts ...int) string {
	var out strings.Builder
	p := newSecretSafe(&out, red, secrets...)
	prev := 0
	for _, c := range cuts {
		p.write(text[prev:c])
		prev = c
	}
	p.write(text[prev:])
	p.flush()
	return out.String()
}

// printChunks prints text through a secretSafe in pieces of size n.
func printChunks(red *plan.Redactor, secrets []string, text string, n int) string {
	var cuts []int
	for c := n; c < len(text); c += n {
		cuts = append(cuts, c)
	}
	return printPieces(red, secrets, text, cuts...)
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

// unicodeEscaped is s with every character as a JSON \uXXXX escape.
func unicodeEscaped(s string) string {
	var b strings.Builder
	for _, r := range s {
		fmt.Fprintf(&b, `\u%04x`, r)
	}
	return b.String()
}

// TestEveryFormTheRedactorHidesIsHiddenHoweverItIsCut: the printed reply
// is the Redactor's redaction of the whole reply however it streams, for
// every form the Redactor finds a secret in (another case, a prefix,
// JSON escapes one and two levels deep, a URL's credentials and secret
// query values), with the API key alone a secret and with a URL's too.
func TestEveryFormTheRedactorHidesIsHiddenHoweverItIsCut(t *testing.T) {
	key := "sk-testsecretkey123456"
	basic := base64.StdEncoding.EncodeToString([]byte("alice:PassW0rdSecret99"))
	texts := map[string]string{
		"upper":       "key SK-TESTSECRETKEY123456 and a longer tail after it, longer than the key",
		"first char":  `escaped \u0073k-testsecretkey123456 end`,
		"all escaped": "<" + unicodeEscaped(key) + ">",
		"two levels":  `quoted \\u0073k-testsecretkey123456 and \u005c\u0075\u0030\u0030\u0037\u0033k-testsecretkey123456.`,
		"prefix":      "the key sk-TestSecret*** is masked, and more words follow it here",
		"url":         "see http://bob:x@h/p?token=abc123def456&q=1 and ?api_key=QuerySecret12345 there",
		"basic":       "auth=Basic " + basic + " decoded=alice:PassW0rdSecret99 pw=PASSW0RDSECRET99",
	}
	for _, u := range []string{"http://h:8000/v1", "http://alice:PassW0rdSecret99@h:8000/v1?api_key=QuerySecret12345"} {
		p := plan.Profile{URL: []string{u}, APIKey: key}
		red, secrets := p.Redactor(), p.Secrets()
		for name, text := range texts {
			want := red.Redact(text)
			if name != "url" && name != "basic" || len(secrets) > 1 {
				for _, leak := range []string{"123456", "ecret99", "SECRET99", "Secret12345", "abc123def456", basic} {
					assert.NotContains(t, want, leak, "%s: the Redactor itself hides it", name)
				}
			}
			for n := 1; n <= 7; n++ {
				assert.Equal(t, want, printChunks(red, secrets, text, n), "%s in pieces of %d, --url %s", name, n, u)
			}
			for i := 0; i <= len(text); i++ {
				if !assert.Equal(t, want, printPieces(red, secrets, text, i), "%s cut at %d, --url %s", name, i, u) {
					break
				}
			}
		}
	}
	// Text without a backslash or a URL is held back only as long as a
	// secret's longest plain form, not its escaped forms.
	var out strings.Builder
	p := newSecretSafe(&out, plan.NewRedactor(key), key)
	text := strings.Repeat("plain words, ", 10)
	p.write(text)
	assert.Equal(t, text[:len(text)-(len(key)-1)], out.String())
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
