package dataset

import "math/rand/v2"

// streamMixture draws each synthetic conversation's bucket of
// Options.SeqDist, apart from the other streams so that the lengths drawn
// without it are unchanged.
const streamMixture = streamPassages + 1

// mixLengths are the means and standard deviations a synthetic
// conversation's ISLs and OSLs are drawn from.
type mixLengths struct {
	isl, osl     int
	islSD, oslSD float64
	// islWin and oslWin, when set, are the windows of --random-range-ratio
	// (drawISL, drawOSL).
	islWin, oslWin span
}

// lengthsOf is what conversation lengths are drawn from: --seq-dist's
// bucket picked with r, one per conversation and kept for all its turns
// (AIPerf's "sticky" buckets), else --isl and --osl, in the windows of
// --random-range-ratio when it is set.
func (o Options) lengthsOf(r *rand.Rand) mixLengths {
	if o.SeqDist == nil {
		l := mixLengths{isl: o.ISLMean, islSD: o.ISLStddev, osl: o.OSLMean, oslSD: o.OSLStddev}
		if x := o.RangeRatio; x != nil {
			l.islWin = islSpan(o.CorpusStyle, o.ISLMean, x.Input)
			l.oslWin = oslSpan(o.CorpusStyle, o.OSLMean, x.Output)
		}
		return l
	}
	b := o.SeqDist.Pick(r)
	return mixLengths{isl: b.ISL, islSD: b.ISLStddev, osl: b.OSL, oslSD: b.OSLStddev}
}
