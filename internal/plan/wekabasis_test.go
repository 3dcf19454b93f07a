package plan

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// --weka-nested-timestamp-basis absolute or relative applies to weka_trace
// (named, or a file whose format is detected when it is read) and is
// refused for another format; auto, the default, is accepted anywhere; a
// value not AIPerf's is refused.
func TestWekaBasisValidated(t *testing.T) {
	p := NewProfile()
	p.Model, p.InputFile, p.CustomDatasetType = []string{"m"}, "trace.jsonl", "mooncake_trace"
	p.WekaNestedTimestampBasis = "absolute"
	assert.Equal(t, "--weka-nested-timestamp-basis absolute applies to weka_trace, whose subagents' requests carry their own timestamps; "+
		"mooncake_trace has none: remove it", onlyError(t, p.Check(), "weka_nested_timestamp_basis"))

	p.WekaNestedTimestampBasis = "auto"
	require.NoError(t, p.Check())
	p.WekaNestedTimestampBasis = "sideways"
	assert.Equal(t, `--weka-nested-timestamp-basis must be one of auto, absolute, relative, got "sideways"`,
		onlyError(t, p.Check(), "weka_nested_timestamp_basis"))

	for _, kind := range []string{"weka_trace", ""} {
		p.CustomDatasetType, p.WekaNestedTimestampBasis = kind, "relative"
		require.NoError(t, p.Check(), kind)
	}
	p = NewProfile()
	p.Model, p.WekaNestedTimestampBasis = []string{"m"}, "relative"
	assert.Contains(t, onlyError(t, p.Check(), "weka_nested_timestamp_basis"), "this input has none: remove it")
}
