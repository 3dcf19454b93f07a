package tokenizer

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzParseHF feeds tokenizer.json parsing arbitrary bytes (seeds in
// testdata/fuzz/FuzzParseHF): it must never panic, and its errors must be
// short. A tokenizer it accepts must encode and decode without panicking.
//
//	go test -run '^$' -fuzz FuzzParseHF ./internal/tokenizer
func FuzzParseHF(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		tok, err := parseHF(data, "fuzz")
		if err != nil {
			if msg := err.Error(); len(msg) > 300 || !utf8.ValidString(msg) {
				t.Fatalf("error too long or not UTF-8 (%d bytes): %.300q", len(msg), msg)
			}
			return
		}
		// Short, so that a hostile split pattern's backtracking stays
		// bounded.
		const text = "Hi <|im|> 42\n"
		ids := tok.Encode(text)
		if tok.Count(text) != len(ids) {
			t.Fatalf("Count %d != len(Encode) %d", tok.Count(text), len(ids))
		}
		tok.Decode(ids)
		tok.Decode([]int{-1, 0, 1 << 40})
	})
}

// FuzzEncode checks the engine against the reference (tiktoken-go's
// CoreBPE) on short texts for the built-ins and the test tokenizer.json
// files, and each scanner against regexp2 (seeds in testdata/fuzz/FuzzEncode).
//
//	go test -run '^$' -fuzz FuzzEncode ./internal/tokenizer
func FuzzEncode(f *testing.F) {
	for _, s := range fuzzAlphabet {
		f.Add(strings.Repeat(s, 3))
	}
	pairs := refPairs(f) // before fuzzing: loading takes seconds
	f.Fuzz(func(t *testing.T, text string) {
		if len(text) > 4096 { // the reference is quadratic
			return
		}
		for _, p := range pairs {
			p.checkSame(t, text)
		}
		for pattern := range scanners {
			checkScanner(t, pattern, text)
		}
	})
}
