package plan

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// --goodput takes AIPerf's "tag:value tag:value" and names what is wrong.
func TestGoodputOption(t *testing.T) {
	slos, err := ParseGoodput("time_to_first_token:200 inter_token_latency:20.5")
	require.NoError(t, err)
	assert.Equal(t, []SLO{{"time_to_first_token", 200}, {"inter_token_latency", 20.5}}, slos)
	for in, want := range map[string]string{
		"ttft:200":                                    `unknown metric "ttft"`,
		"time_to_first_token":                         "is not tag:value",
		"time_to_first_token:fast":                    `threshold "fast" is not a finite number`,
		"time_to_first_token:-1":                      "≥ 0",
		"time_to_first_token:1 time_to_first_token:2": "time_to_first_token is given twice",
	} {
		p := valid()
		p.Goodput = in
		err := p.Check()
		require.Error(t, err, in)
		assert.Contains(t, err.Error(), "goodput", in)
		assert.Contains(t, err.Error(), want, in)
	}
}
