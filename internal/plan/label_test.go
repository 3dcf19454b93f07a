package plan

import (
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// column is one option's values as the cells of a one-axis sweep.
func column(name string, values ...any) [][]Param {
	cells := make([][]Param, len(values))
	for i, v := range values {
		cells[i] = []Param{{name, v}}
	}
	return cells
}

func TestCellLabelsReadAsBefore(t *testing.T) {
	t.Parallel()
	tests := []struct {
		params []Param
		want   string
	}{
		{nil, "base"},
		{[]Param{{"concurrency", 4}, {"synthetic_input_tokens_mean", 128}}, "concurrency_4__synthetic_input_tokens_mean_128"},
		{[]Param{{"request_rate", 0.5}}, "request_rate_0.5"},
		{[]Param{{"request_rate", 100000.0}}, "request_rate_100000"},
		{[]Param{{"model", "meta-llama/Llama-3.1-8B-Instruct"}}, "model_meta-llama-Llama-3.1-8B-Instruct"},
		{[]Param{{"streaming", true}, {"output_tokens_mean", nil}}, "streaming_true__output_tokens_mean_none"},
		{[]Param{{"model", []string{"a", "b"}}}, "model_a-b"},
		{[]Param{{"model", "snake_case_name"}}, "model_snake_case_name"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, CellLabel(tt.params))
		assert.Equal(t, []string{tt.want}, CellLabels([][]Param{tt.params}), "a value alone needs no hash")
	}
}

func TestCellLabelsAreFaithful(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		cells [][]Param
		want  []string // nil: only distinctness is checked
	}{
		{
			name:  "exponents",
			cells: column("request_rate", 1e9, 1e-9, 2.5e-7, 1e21),
			want:  []string{"request_rate_1e9", "request_rate_1e-9", "request_rate_2.5e-7", "request_rate_1e21"},
		},
		{
			name:  "infinities and nan",
			cells: column("request_rate", math.Inf(1), math.Inf(-1), math.NaN(), 0.0),
			want:  []string{"request_rate_inf", "request_rate_-inf", "request_rate_nan", "request_rate_0"},
		},
		{
			name:  "signed zero",
			cells: column("request_rate", math.Copysign(0, -1), 0.0),
			want:  []string{"request_rate_-0", "request_rate_0"},
		},
		{name: "differ only after sanitising", cells: column("model", "a/b", "a-b", "a b", "a:b")},
		{name: "differ only in case", cells: column("model", "Llama", "llama", "LLAMA")},
		{name: "none and the string none", cells: column("output_tokens_mean", nil, "none")},
		{name: "list and string", cells: column("model", []string{"a", "b"}, "a+b", []string{"a+b"})},
		{name: "separator inside a value", cells: [][]Param{
			{{"x", "a__y_b"}, {"y", "c"}},
			{{"x", "a"}, {"y", "b__y_c"}},
			{{"x", "a_"}, {"y", "_b"}},
			{{"x", "a"}, {"y", "__b"}},
		}},
		{name: "empty and dash", cells: column("model", "", "-", "_")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := CellLabels(tt.cells)
			if tt.want != nil {
				assert.Equal(t, tt.want, got)
			}
			seen := map[string]int{}
			for i, l := range got {
				requireSegment(t, l)
				folded := strings.ToLower(l)
				if j, dup := seen[folded]; dup {
					t.Errorf("cells %v and %v share the directory %s", tt.cells[j], tt.cells[i], l)
				}
				seen[folded] = i
			}
		})
	}
}

func TestCellLabelsKeepUnambiguousValuesReadable(t *testing.T) {
	t.Parallel()
	got := CellLabels(column("model", "org/m", "org-m", "plain"))
	assert.Regexp(t, `^model_org-m-[0-9a-f]{8}$`, got[0], "a colliding value keeps its readable form and gains a hash")
	assert.Regexp(t, `^model_org-m-[0-9a-f]{8}$`, got[1])
	assert.Equal(t, "model_plain", got[2], "a value without a look-alike is unchanged")
	again := CellLabels(column("model", "org-m", "org/m"))
	assert.Equal(t, []string{got[1], got[0]}, again, "the hash depends on the value, not on its position")
}

func TestLongNamesAreShortenedWithAHash(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 400)
	labels := CellLabels(column("model", long+"a", long+"b"))
	for _, l := range labels {
		requireSegment(t, l)
		assert.Len(t, l, MaxNameBytes)
		assert.True(t, strings.HasPrefix(l, "model_xxxx"), l)
	}
	assert.NotEqual(t, labels[0], labels[1])
	assert.Equal(t, labels[0], CellLabel([]Param{{"model", long + "a"}}), "stable")

	assert.Equal(t, strings.Repeat("s", MaxNameBytes), DirName(strings.Repeat("s", MaxNameBytes)), "255 bytes fit")
	d := DirName(strings.Repeat("s", MaxNameBytes+1))
	assert.Len(t, d, MaxNameBytes)
	assert.NotEqual(t, d, DirName(strings.Repeat("s", MaxNameBytes+2)))

	tr := Trial{Sweep: strings.Repeat("w", 300), Cell: Cell{Label: "c_1"}, Number: 1}
	parts := strings.Split(tr.Dir(), "/")
	require.Len(t, parts, 3)
	assert.Len(t, parts[0], MaxNameBytes, "the sweep's directory is shortened too")
	assert.Equal(t, DirName(tr.Sweep), parts[0])
}

func TestCellIDTellsInfinitiesApart(t *testing.T) {
	t.Parallel()
	ids := map[string]bool{}
	for _, v := range []any{math.Inf(1), math.Inf(-1), math.NaN(), 1.0} {
		ids[CellID("s", []Param{{"request_rate", v}})] = true
	}
	assert.Len(t, ids, 4)
	assert.Equal(t, "b9ce564da68b", CellID("s", []Param{{"concurrency", 4}}), "ids of JSON values are unchanged (--resume)")
}

// requireSegment checks that s is a usable single directory name.
func requireSegment(t *testing.T, s string) {
	t.Helper()
	require.NotEmpty(t, s)
	require.LessOrEqual(t, len(s), MaxNameBytes, s)
	require.NotContains(t, []string{".", ".."}, s)
	for _, r := range s {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-'
		require.True(t, ok, "%q has %q", s, r)
	}
}

// FuzzCellLabel checks that labels are single directory names of at most
// 255 bytes and that distinct cells of a sweep get distinct labels, also
// on a case-insensitive file system.
func FuzzCellLabel(f *testing.F) {
	f.Fuzz(func(t *testing.T, a, b string, x, y float64, c int) {
		cells := [][]Param{
			{{"model", a}, {"request_rate", x}, {"concurrency", c}},
			{{"model", b}, {"request_rate", y}, {"concurrency", c}},
			{{"model", []string{a, b}}, {"request_rate", x}, {"concurrency", c}},
			{{"model", nil}, {"request_rate", y}, {"concurrency", c + 1}},
		}
		labels := CellLabels(cells)
		for i, l := range labels {
			requireSegment(t, l)
			requireSegment(t, CellLabel(cells[i]))
			for j := range i {
				if CellID("", cells[i]) != CellID("", cells[j]) && strings.EqualFold(l, labels[j]) {
					t.Fatalf("cells %v and %v are both labelled %s", cells[j], cells[i], l)
				}
			}
		}
		requireSegment(t, DirName(a))
	})
}
