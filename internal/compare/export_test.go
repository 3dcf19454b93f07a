package compare

import "github.com/aiperf-go/aiperf/internal/servermetrics"

// ServerValueForTest is a run's value of a server key over its series.
func ServerValueForTest(series []servermetrics.Series, k Key) (float64, bool) {
	return serverValue(series, k)
}

// JudgeForTest compares the trials of other against base's, as a
// comparison's verdict is computed, and renders its table cell.
func JudgeForTest(base, other []float64, dir Direction, confidence, thresholdPct float64) (Versus, string) {
	v := judge(newEstimate(base, confidence), newEstimate(other, confidence), dir, confidence, thresholdPct)
	return v, v.format()
}

// JudgeKeyForTest is JudgeForTest for statistic k.
func JudgeKeyForTest(k Key, base, other []float64, dir Direction, confidence, thresholdPct float64) Versus {
	return judgeKey(k, newEstimate(base, confidence), newEstimate(other, confidence), dir, confidence, thresholdPct)
}

var FormatFloat = formatFloat
