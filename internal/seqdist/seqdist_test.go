package seqdist

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The forms of AIPerf's docs/tutorials/sequence-distributions.md.
func TestParseAIPerfForms(t *testing.T) {
	want := []Bucket{
		{ISL: 256, ISLStddev: 10, OSL: 128, OSLStddev: 5, Weight: 60},
		{ISL: 512, ISLStddev: 20, OSL: 256, OSLStddev: 15, Weight: 40},
	}
	for _, text := range []string{
		"256|10,128|5:60;512|20,256|15:40",
		" 256|10 , 128|5 : 60 ; 512|20,256|15:40; ",
		"[(256|10,128|5):60,(512|20,256|15):40]",
		"[ ( 256|10 , 128|5 ) : 60 , (512|20,256|15):40 ]",
		`{"pairs": [{"isl": 256, "isl_stddev": 10, "osl": 128, "osl_stddev": 5, "prob": 60},
		  {"isl": 512, "isl_stddev": 20, "osl": 256, "osl_stddev": 15, "prob": 40}]}`,
	} {
		d, err := Parse(text)
		require.NoError(t, err, text)
		assert.Equal(t, want, d.Buckets, text)
	}
	d, err := Parse("64|10,32|8:70;256|40,128|20:20;1024|100,512|50:10")
	require.NoError(t, err)
	assert.Equal(t, "70% (ISL~N(64,10), OSL~N(32,8)), 20% (ISL~N(256,40), OSL~N(128,20)), 10% (ISL~N(1024,100), OSL~N(512,50))", d.String())
	d, err = Parse("128,64:0.6;2048,256:.4")
	require.NoError(t, err)
	assert.Equal(t, "60% (ISL=128, OSL=64), 40% (ISL=2048, OSL=256)", d.String(), "weights are relative")
}

func TestParseErrorsNamePositionAndExpectation(t *testing.T) {
	for text, want := range map[string]string{
		"":                        "is empty: expected entries such as 64,32:70;256,128:30",
		"64,32:70;x":              `at character 10: expected the ISL of entry 2 (a whole number of tokens), got "x"`,
		"64;32:70":                `at character 3: expected ',' then the OSL of entry 1, got ";32:70"`,
		"64,32":                   "at character 6: expected ':' then the weight of entry 1, got the end",
		"64,32:":                  "at character 7: expected the weight of entry 1 (a positive number such as 70 or 0.7), got the end",
		"64,32:0":                 "at character 7: the weight of entry 1 must be positive, got 0",
		"64,32:-5":                `at character 7: expected the weight of entry 1 (a positive number such as 70 or 0.7), got "-5"`,
		"0,32:5":                  "at character 1: the ISL of entry 1 must be at least 1 token, got 0",
		"64,0:5":                  "at character 4: the OSL of entry 1 must be at least 1 token, got 0",
		"64|,32:5":                `at character 4: expected the ISL standard deviation of entry 1 after '|' (a number ≥ 0), got ",32:5"`,
		"64,32:5 64,32:5":         `at character 9: expected ';' before the next entry, or the end, got "64,32:5"`,
		"99999999,32:5":           "at character 1: the ISL of entry 1 must be at most 16777216 tokens, got 99999999",
		"64.5,32:5":               `at character 3: expected ',' then the OSL of entry 1, got ".5,32:5"`,
		"[(64,32):5,]":            "at character 12: expected an entry (ISL,OSL):WEIGHT after ',', got the end",
		"[(64,32:5]":              `at character 8: expected ')' closing entry 1, got ":5"`,
		"[]":                      "at character 2: expected an entry such as 64,32:70, got none",
		"«64»,32:5":               `at character 1: expected the ISL of entry 1 (a whole number of tokens), got "«64»,32:5"`,
		"é;64,32:5x":              `at character 1: expected the ISL of entry 1 (a whole number of tokens), got "é;64,32:5x"`,
		"64,32:5;é":               `at character 9: expected the ISL of entry 2 (a whole number of tokens), got "é"`,
		`{"pairs": [{"isl": 1}]}`: "pairs[0].osl is required",
		`{"pairs": []}`:           `JSON "pairs" must hold 1 to 10000 pairs, got 0`,
		`{"pair": []}`:            `JSON key "pair" is not known: expected {"pairs": [...]}`,
		`{"pairs": [{"isl": 1.5, "osl": 2, "prob": 1}]}`:                 "pairs[0].isl must be a whole number of tokens, got 1.5",
		`{"pairs": [{"isl": 1, "osl": 2, "prob": 0}]}`:                   "pairs[0].prob must be positive, got 0",
		`{"pairs": [{"isl": 1, "osl": 2, "prob": 1, "stddev": 3}]}`:      "pairs[0].stddev is not a known key: expected isl, osl, prob, isl_stddev, osl_stddev",
		`{"pairs": [{"isl": 1, "osl": 2, "prob": 1, "osl_stddev": -1}]}`: "pairs[0].osl_stddev must be at least 0, got -1",
		`{"pairs": [{"isl": 1, "osl": "2", "prob": 1}]}`:                 `pairs[0].osl must be a number, got "2"`,
		`{"pairs": [}`: "at character 12: invalid JSON: invalid character '}' looking for beginning of value",
	} {
		_, err := Parse(text)
		require.Error(t, err, text)
		assert.Equal(t, want, err.Error(), text)
	}
}

// A mixture's draws follow its weights: exactly the share a uniform draw
// per bucket gives (side "right" on the cumulative weights).
func TestPickFollowsWeights(t *testing.T) {
	d, err := Parse("100,10:7;1000,100:2;5000,500:1")
	require.NoError(t, err)
	r := rand.New(rand.NewPCG(1, 2))
	counts := map[int]int{}
	const n = 100_000
	for range n {
		counts[d.Pick(r).ISL]++
	}
	for i, b := range d.Buckets {
		p := d.Share(i)
		bound := 5 * math.Sqrt(n*p*(1-p)) // 5 sigma of the binomial
		assert.InDelta(t, n*p, float64(counts[b.ISL]), bound, "bucket %d", i)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"64|10,32|8:70;256,128:30", "[(1,2):3]", `{"pairs":[{"isl":1,"osl":2,"prob":3}]}`, "1,1:1;;"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := Parse(s)
		if err != nil {
			var e *Error
			require.ErrorAs(t, err, &e)
			require.LessOrEqual(t, e.Pos, len([]rune(s))+1)
			return
		}
		require.NotEmpty(t, d.Buckets)
		for _, b := range d.Buckets {
			require.True(t, b.ISL >= 1 && b.OSL >= 1 && b.Weight > 0 && b.ISLStddev >= 0 && b.OSLStddev >= 0, "%+v", b)
		}
		_ = strings.TrimSpace(d.String())
	})
}
