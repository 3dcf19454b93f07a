package metrics

import "slices"

// streamingOnlyTags are the client metrics only a streamed reply measures:
// a run without streaming has none of them (Summarize).
var streamingOnlyTags = []string{
	TagTTFT, TagTTST, TagTTFO, TagDecodeDuration, TagFullDecodeDuration,
	TagITL, TagFullITL, TagICL, TagPerUserThroughput, TagFullPerUser,
	TagPrefillPerUser,
}

// StreamingOnly tells whether tag is a metric only a streamed reply
// measures (time_to_first_token, inter_token_latency, ...): the source of
// truth for the search's filters and objective and for --goodput.
func StreamingOnly(tag string) bool { return slices.Contains(streamingOnlyTags, tag) }
