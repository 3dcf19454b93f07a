package plan

import (
	"fmt"
	"slices"
)

// wekaBasis checks --weka-nested-timestamp-basis: one of AIPerf's values,
// and, but for "auto" (the default, accepted anywhere as AIPerf's defaults
// are), a format whose subagents' requests carry timestamps (a detected
// format is checked when it is read).
func (v *validator) wekaBasis(p *Profile, kind string) {
	switch b := p.WekaNestedTimestampBasis; b {
	case "", "auto":
	case "absolute", "relative":
		weka := slices.Contains(wekaBasisFormats, p.CustomDatasetType) || detectedFormat(p)
		v.check(weka, "weka_nested_timestamp_basis", fmt.Sprintf(
			"%s applies to weka_trace, whose subagents' requests carry their own timestamps; %s has none: remove it", b, kind))
	default:
		v.oneOf("weka_nested_timestamp_basis", b, "auto", "absolute", "relative")
	}
}
