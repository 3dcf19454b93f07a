package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// A value outside a flag's choices lists the choices without the empty
// default and proposes the closest; other parse errors pass unchanged.
func TestEnumErrorsProposeAChoice(t *testing.T) {
	for _, tc := range []struct{ args, want string }{
		{"--server vlm", `--server must be one of vllm, sglang, trtllm, llamacpp, got "vlm" (did you mean "vllm"?)`},
		{"--endpoint-type chat-completions", `got "chat-completions" (did you mean "chat" or "completions"?)`},
		{"--endpoint-type xyz", `got "xyz"` + "\n"},
		{"--no-such-flag", "unknown flag --no-such-flag"},
	} {
		t.Run(tc.args, func(t *testing.T) {
			inv := cli(t, "", append([]string{"profile", "-m", "m", "-u", "http://127.0.0.1:1"}, strings.Fields(tc.args)...)...)
			assert.Equal(t, ExitUsage, inv.code)
			assert.Contains(t, inv.stderr, tc.want)
			assert.NotContains(t, inv.stderr, `"",`)
		})
	}
}
