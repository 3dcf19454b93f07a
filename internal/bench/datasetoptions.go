package bench

import (
	"github.com/aiperf-go/aiperf/internal/dataset"
	"github.com/aiperf-go/aiperf/internal/plan"
)

// datasetOptions maps the profile's options to the dataset's.
func datasetOptions(p plan.Profile) dataset.Options {
	o := dataset.Options{
		ISLMean:            p.SyntheticInputTokensMean,
		ISLStddev:          p.SyntheticInputTokensStddev,
		OSLStddev:          p.OutputTokensStddev,
		Entries:            p.NumDatasetEntries,
		Seed:               p.RandomSeed,
		InputFile:          p.InputFile,
		CustomType:         p.CustomDatasetType,
		PublicDataset:      p.PublicDataset,
		BlockSize:          p.PromptInputTokensBlockSize,
		TurnMean:           p.ConversationTurnMean,
		TurnStddev:         float64(p.ConversationTurnStddev),
		TurnDelayMeanMs:    p.ConversationTurnDelayMean,
		TurnDelayStddevMs:  p.ConversationTurnDelayStddev,
		TurnDelayRatio:     p.ConversationTurnDelayRatio,
		PrefixPoolSize:     p.PromptPrefixPoolSize,
		PrefixLength:       p.PromptPrefixLength,
		FixedSchedule:      p.FixedSchedule,
		AutoOffset:         p.FixedScheduleAutoOffset,
		StartOffsetMs:      msOffset(p.FixedScheduleStartOffset),
		EndOffsetMs:        msOffset(p.FixedScheduleEndOffset),
		Sampling:           p.DatasetSamplingStrategy,
		SharedSystemLength: derefInt(p.SharedSystemPromptLength),
		UserContextLength:  derefInt(p.UserContextPromptLength),
		IgnoreDelays:       p.IgnoreTraceDelays,
		UUIDAndStrip:       p.UUIDAndStrip,
		Replay:             replayOptions(p),
		WekaBasis:          p.WekaNestedTimestampBasis,
		Corpus:             p.PromptCorpus,
		CorpusStyle:        p.RandomCorpusStyle,
	}
	if p.RandomRangeRatio != "" {
		// Checked by plan.Check before any dataset is built.
		if in, out, err := plan.ParseRangeRatio(p.RandomRangeRatio, p.RandomCorpusStyle); err == nil {
			o.RangeRatio = &dataset.RangeRatio{Input: in, Output: out}
		}
	}
	if x := p.InterTurnDelayCapSeconds; x != nil {
		o.DelayCapMs = plan.Ptr(*x * 1000)
	}
	if p.OutputTokensMean != nil {
		o.OSLMean = *p.OutputTokensMean
	}
	o.Batch, o.Rankings = p.PromptBatchSize, rankingsOptions(p)
	o.Images, o.Audios, o.Videos = p.Images(), p.Audios(), p.Videos()
	if p.ConversationNum != nil {
		o.Conversations = *p.ConversationNum
		if p.NumDatasetEntries == plan.DefaultDatasetEntries {
			// As AIPerf: without --num-dataset-entries, the sessions are
			// that many distinct conversations. (An explicit 100 cannot be
			// told from the default.)
			o.Entries = 0
		}
	}
	return o
}

func msOffset(ms *int) *float64 {
	if ms == nil {
		return nil
	}
	x := float64(*ms)
	return &x
}

func derefInt(x *int) int {
	if x == nil {
		return 0
	}
	return *x
}
