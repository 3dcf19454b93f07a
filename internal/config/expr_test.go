package config

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The {{ }} expressions AIPerf's configs use evaluate as Jinja (Python)
// does; what is not supported, or would be unbounded, is refused.
func TestEvalExpr(t *testing.T) {
	vars := map[string]value{"base": int64(16), "isl": int64(512), "rate": 2.5, "name": "llama", "mult": "10"}
	for src, want := range map[string]value{
		"base * 10":               int64(160),
		"isl // 10":               int64(51),
		"-7 // 2":                 int64(-4),
		"-7 % 3":                  int64(2),
		"7 / 2":                   3.5,
		"base ** 2":               int64(256),
		"2 ** -1":                 0.5,
		"2 ** 3 ** 2":             int64(512),
		"-2 ** 2":                 int64(-4),
		"(base + 4) * 2":          int64(40),
		"rate * 4":                10.0,
		"base * mult | int":       int64(160),
		"'10' | int * 2":          int64(20), // after ${MULT:10} is substituted
		"rate | int":              int64(2),
		"base | float":            16.0,
		"3.14159 | round(2)":      3.14,
		"(-base) | abs":           int64(16),
		"-base | abs":             int64(-16), // a filter binds tighter, as in Jinja
		"name ~ '-' ~ base":       "llama-16",
		"name + '-x'":             "llama-x",
		"'ab' * 3":                "ababab",
		"base | string":           "16",
		"rate | string":           "2.5",
		"9223372036854775807 + 1": 9.223372036854776e18,
	} {
		got, err := evalExpr(src, vars)
		require.NoError(t, err, src)
		assert.Equal(t, want, got, src)
	}
	for src, msg := range map[string]string{
		"base > 2":                      `unexpected ">": only arithmetic`,
		"nosuch * 2":                    "no variable nosuch under variables:",
		"base / 0":                      "division by zero",
		"base // 0":                     "division by zero",
		"base | upper":                  `filter "upper" is not supported: use int, float, round, abs or string`,
		"true":                          `"true": only arithmetic on numbers and strings is supported`,
		"(base":                         "a ( is not closed",
		"'abc":                          "a string is not closed",
		"base +":                        "the expression ends early",
		"base 2":                        `unexpected "2"`,
		"'x' * 100000":                  "a string of more than 65536 bytes",
		"2 ** 5000":                     "an exponent over 1024",
		"10.0 ** 400":                   "is not a finite number",
		"name - 1":                      "cannot apply - to a string",
		"base + 'x'":                    "cannot apply + to a number and a string",
		strings.Repeat("1+", 600) + "1": "longer than 1000 characters",
	} {
		_, err := evalExpr(src, vars)
		require.Error(t, err, src)
		assert.Contains(t, err.Error(), msg, src)
	}
	assert.Equal(t, "3.0", show(3.0), "a float prints as Python does")
	assert.Equal(t, "1e+21", show(1e21))
}
