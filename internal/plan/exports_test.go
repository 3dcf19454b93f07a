package plan

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSummaryFormats(t *testing.T) {
	p := valid()
	p.SummaryFormats = []string{"json"}
	require.NoError(t, p.Check())
	for formats, want := range map[string][]string{
		"artifacts.summary must include json":                       {"csv"},
		`artifacts.summary must be one of json, csv, got "parquet"`: {"json", "parquet"},
	} {
		p.SummaryFormats = want
		err := p.Check()
		require.Error(t, err)
		assert.Contains(t, err.Error(), formats)
	}
}
