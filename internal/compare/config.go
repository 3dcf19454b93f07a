package compare

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/store"
)

// configFields are the settings whose mismatch makes a comparison suspect.
var configFields = []struct {
	name string
	get  func(r *store.RunRow) string
}{
	{"model", func(r *store.RunRow) string { return r.Model }},
	{"url", func(r *store.RunRow) string { return sameURLs(r.URL) }}, // redacted when stored
	{"endpoint_type", func(r *store.RunRow) string { return r.EndpointType }},
	{"streaming", func(r *store.RunRow) string { return strconv.FormatBool(r.Streaming) }},
	{"mode", func(r *store.RunRow) string { return r.Mode }},
	{"concurrency", func(r *store.RunRow) string { return optional(r.Concurrency) }},
	{"request_rate", func(r *store.RunRow) string { return optional(r.RequestRate) }},
	{"isl", func(r *store.RunRow) string { return optional(r.ISL) }},
	{"osl", func(r *store.RunRow) string { return optional(r.OSL) }},
	// how the client read (its default follows the client's cores)
	{"rx_coalesce_usecs", func(r *store.RunRow) string { return strconv.Itoa(r.RxCoalesceUsecs) }},
}

// sameURLs is a run's --url list as the requests went: a URL given
// without a scheme is http://, a trailing slash is none.
func sameURLs(list string) string {
	urls := strings.Split(list, ",")
	for i, u := range urls {
		if u != "" {
			urls[i] = strings.TrimSuffix(plan.NormalizeURL(u), "/")
		}
	}
	return strings.Join(urls, ",")
}

func optional[T int | float64](p *T) string {
	if p == nil {
		return "-"
	}
	return fmt.Sprint(*p)
}

// configDifferences lists, one line per setting, the settings whose values
// differ between the named sides, e.g. `osl: A = 64, B = 128`. A side
// whose runs disagree among themselves shows every value, as "4|8".
func configDifferences(names []string, sides [][]store.RunRow) []string {
	var out []string
	for _, f := range configFields {
		values := make([]string, len(sides))
		for i, runs := range sides {
			var seen []string
			for j := range runs {
				if v := f.get(&runs[j]); !slices.Contains(seen, v) {
					seen = append(seen, v)
				}
			}
			slices.Sort(seen)
			values[i] = strings.Join(seen, "|")
		}
		if len(slices.Compact(slices.Clone(values))) <= 1 {
			continue
		}
		parts := make([]string, len(sides))
		for i := range sides {
			parts[i] = names[i] + " = " + values[i]
		}
		out = append(out, f.name+": "+strings.Join(parts, ", "))
	}
	return out
}

// configNotes words config differences for the notes under a table.
func configNotes(diffs []string) []string {
	out := make([]string, len(diffs))
	for i, d := range diffs {
		out[i] = "config differs: " + d
	}
	return out
}
