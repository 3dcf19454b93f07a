package config

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A file dataset's weka_nested_timestamp_basis (AIPerf's
// --weka-nested-timestamp-basis) sets the profile's; a value not one of
// AIPerf's is refused at its line.
func TestWekaNestedTimestampBasisKey(t *testing.T) {
	for _, basis := range []string{"auto", "absolute", "relative"} {
		f, err := parse(
			"benchmark:",
			"  dataset:",
			"    type: file",
			"    path: traces/",
			"    format: weka_trace",
			"    weka_nested_timestamp_basis: "+basis,
		)
		require.NoError(t, err, basis)
		assert.Equal(t, basis, f.Profile.WekaNestedTimestampBasis)
	}
	f, err := parse("benchmark:", "  dataset:", "    type: file", "    path: traces/", "    format: weka_trace")
	require.NoError(t, err)
	assert.Empty(t, f.Profile.WekaNestedTimestampBasis, "unset: auto")

	_, err = parse(
		"benchmark:",
		"  dataset:",
		"    type: file",
		"    path: traces/",
		"    weka_nested_timestamp_basis: sideways",
	)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `bench.yaml:5: benchmark.dataset.weka_nested_timestamp_basis: expected auto | absolute | relative, got "sideways"`)
}
