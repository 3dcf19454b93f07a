package plan

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCheckSequenceDistribution(t *testing.T) {
	p := valid()
	p.SequenceDistribution = "64|10,32|8:70;256|40,128|20:20;1024|100,512|50:10"
	require.NoError(t, p.Check())
	for dist, want := range map[string]string{
		"64,32:70;x": `--sequence-distribution "64,32:70;x": at character 10: expected the ISL of entry 2 (a whole number of tokens), got "x"`,
		"64,32:0":    `--sequence-distribution "64,32:0": at character 7: the weight of entry 1 must be positive, got 0`,
	} {
		p.SequenceDistribution = dist
		err := p.Check()
		require.Error(t, err)
		assert.Equal(t, want, err.Error())
	}
	p.SequenceDistribution = "64,32:1"
	p.InputFile = "trace.jsonl"
	assert.ErrorContains(t, p.Check(), "--sequence-distribution draws the ISL and OSL of synthetic prompts: it cannot be used with --input-file")
	p.InputFile = ""
	p.EndpointType = EndpointCohereRankings
	assert.ErrorContains(t, p.Check(), "--sequence-distribution does not apply to a rankings endpoint")
	p = valid()
	p.SequenceDistribution = "1,1:1;16000000,1:1e-9"
	assert.ErrorContains(t, p.Check(), "at character 19: expected ';'") // no exponent in AIPerf's numbers
	p.SequenceDistribution = "1,1:1;16000000,1:0.000001"
	p.NumDatasetEntries = 100
	assert.ErrorContains(t, p.Check(), "--num-dataset-entries × the largest ISL of --sequence-distribution is 1600000000 prompt tokens")
}
