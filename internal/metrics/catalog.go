package metrics

import (
	"cmp"
	"slices"
)

// Group is the console table a metric appears in, as AIPerf's
// console_group: GroupNone metrics are exported (JSON, CSV, JSONL, store)
// but not shown.
type Group string

// Console groups, in the order their tables are printed.
const (
	GroupNone        Group = ""
	GroupDefault     Group = "default"          // "LLM Metrics"
	GroupUsage       Group = "usage"            // "LLM Metrics: Usage"
	GroupSpecDecode  Group = "spec_decode"      // "Spec Decode"
	GroupPowerNVIDIA Group = "gpu_power_nvidia" // "GPU Power Efficiency (NVIDIA)"
	GroupHTTPTrace   Group = "http_trace"       // "HTTP Trace Timing", with --show-trace-timing
	GroupEffective   Group = "effective"        // "LLM Metrics: Effective"
	GroupActive      Group = "active"           // "LLM Metrics: Active"
)

// ConsoleGroups are the groups with a console table, in print order.
var ConsoleGroups = []Group{GroupDefault, GroupEffective, GroupActive, GroupUsage, GroupSpecDecode, GroupPowerNVIDIA,
	GroupHTTPTrace}

// Better says which way a metric is better, as AIPerf's LARGER_IS_BETTER
// flag (and its default, smaller is better) where it decides, else neither.
type Better int

// Directions of a metric.
const (
	Neither Better = iota
	Lower
	Higher
)

// info is how AIPerf shows and judges one metric: its console group and
// display_order within it, and which way it is better.
type info struct {
	group  Group
	order  int
	better Better
}

// catalog holds every metric with a console group or a direction; a tag
// not here is exported only, and neither better nor worse. The orders are
// AIPerf's display_order where it has one.
var catalog = map[string]info{
	TagTTFT:                  {GroupDefault, 100, Lower},
	TagTTST:                  {GroupDefault, 200, Lower},
	TagTTFO:                  {GroupNone, 0, Lower},
	TagRequestLatency:        {GroupDefault, 300, Lower},
	TagDecodeDuration:        {GroupDefault, 350, Lower},
	TagFullDecodeDuration:    {GroupDefault, 360, Lower},
	TagITL:                   {GroupDefault, 400, Lower},
	TagFullITL:               {GroupDefault, 410, Lower},
	TagICL:                   {GroupNone, 0, Lower},
	TagPerUserThroughput:     {GroupDefault, 500, Higher},
	TagFullPerUser:           {GroupDefault, 505, Higher},
	TagE2EOutputThroughput:   {GroupDefault, 510, Higher},
	TagOSL:                   {GroupDefault, 600, Neither},
	TagISL:                   {GroupDefault, 700, Neither},
	TagOutputTokenThroughput: {GroupDefault, 800, Higher},
	TagRequestThroughput:     {GroupDefault, 900, Higher},
	TagRequestCount:          {GroupDefault, 1000, Higher},
	TagErrorRequestCount:     {GroupDefault, 1010, Lower},
	TagCancelledRequestCount: {GroupDefault, 1020, Lower},
	TagGoodput:               {GroupDefault, 1030, Higher},

	// Network calibration (--network-latency-*), beside their sources.
	TagNetworkAdjustedTTFT:    {GroupDefault, 101, Lower},
	TagNetworkAdjustedTTFO:    {GroupNone, 0, Lower},
	TagNetworkAdjustedLatency: {GroupDefault, 301, Lower},
	TagNetworkRTT:             {GroupDefault, 305, Neither},

	TagPrefillPerUser:         {GroupNone, 0, Higher},
	TagTotalTokenThroughput:   {GroupNone, 0, Higher},
	TagInputTokenThroughput:   {GroupNone, 805, Higher},
	TagE2EInteractivityP75:    {GroupNone, 0, Higher},
	TagE2EInteractivityP90:    {GroupNone, 0, Higher},
	TagBenchmarkDuration:      {GroupNone, 0, Lower},
	TagSendLag:                {GroupNone, 0, Lower},
	TagErrorISL:               {GroupNone, 0, Lower},
	TagTotalErrorISL:          {GroupNone, 0, Lower},
	TagGoodRequestCount:       {GroupNone, 0, Higher},
	TagGoodRequestFraction:    {GroupNone, 0, Higher},
	TagRequestErrorRate:       {GroupNone, 0, Lower},
	TagUsageDiscrepancyCount:  {GroupNone, 0, Lower},
	TagOSLMismatchCount:       {GroupNone, 0, Lower},
	TagUsagePromptDiffPct:     {GroupNone, 0, Lower},
	TagUsageCompletionDiffPct: {GroupNone, 0, Lower},
	TagUsageReasoningDiffPct:  {GroupNone, 0, Lower},

	// The time-weighted views and the coordinated-omission-aware latency:
	// AIPerf's "LLM Metrics: Effective" and "LLM Metrics: Active" tables,
	// in its order.
	TagEffectiveLatency:            {GroupEffective, 1, Lower},
	TagEffectiveConcurrency:        {GroupEffective, 2, Neither},
	TagEffectiveDecodeThroughput:   {GroupEffective, 3, Higher},
	TagEffectivePrefillThroughput:  {GroupEffective, 4, Higher},
	TagEffectiveDecodeConcurrency:  {GroupEffective, 5, Neither},
	TagEffectivePrefillConcurrency: {GroupEffective, 6, Neither},
	TagEffectiveTotalThroughput:    {GroupEffective, 7, Higher},
	TagEffectiveDecodePerUser:      {GroupEffective, 8, Higher},
	TagEffectivePrefillPerUser:     {GroupEffective, 9, Higher},
	TagTokensInFlight:              {GroupEffective, 10, Neither},
	TagActiveDecodeThroughput:      {GroupActive, 1, Higher},
	TagActivePrefillThroughput:     {GroupActive, 2, Higher},
	TagActiveDecodePerUser:         {GroupActive, 3, Higher},
	TagActivePrefillPerUser:        {GroupActive, 4, Higher},
	TagActiveTotalThroughput:       {GroupActive, 5, Higher},
	TagCreditToStartLatency:        {GroupNone, 0, Lower},

	// The server's usage: AIPerf's "LLM Metrics: Usage" table.
	TagUsagePromptTokens:         {GroupUsage, 1000, Neither},
	TagUsageCacheReadTokens:      {GroupUsage, 1010, Higher},
	TagUsageCacheWriteTokens:     {GroupUsage, 1015, Neither},
	TagUsageCacheMissTokens:      {GroupUsage, 1017, Lower},
	TagUsageCompletionTokens:     {GroupUsage, 1100, Neither},
	TagUsageReasoningTokens:      {GroupUsage, 1110, Neither},
	TagUsageAcceptedPrediction:   {GroupUsage, 1130, Higher},
	TagUsageRejectedPrediction:   {GroupUsage, 1140, Lower},
	TagUsageTotalTokens:          {GroupUsage, 1200, Neither},
	TagTotalUsagePromptTokens:    {GroupUsage, 2000, Neither},
	TagTotalUsageCacheRead:       {GroupUsage, 2010, Higher},
	TagOverallCacheReadPct:       {GroupUsage, 2012, Higher},
	TagTotalUsageCacheWrite:      {GroupUsage, 2015, Neither},
	TagTotalUsageCacheMiss:       {GroupUsage, 2017, Lower},
	TagTotalUsageCompletion:      {GroupUsage, 2100, Neither},
	TagTotalUsageReasoning:       {GroupUsage, 2110, Neither},
	TagTotalUsageAcceptedPredict: {GroupUsage, 2130, Higher},
	TagTotalUsageRejectedPredict: {GroupUsage, 2140, Lower},
	TagTotalUsageTotalTokens:     {GroupUsage, 2200, Neither},

	// Speculative decoding, from the server's per-request acceptance stats.
	TagSpecAcceptanceLength:       {GroupSpecDecode, 5000, Higher},
	TagSpecWeightedLength:         {GroupSpecDecode, 5010, Higher},
	TagSpecDraftAcceptanceRate:    {GroupSpecDecode, 5020, Higher},
	TagSpecOverallAcceptanceRate:  {GroupSpecDecode, 5025, Higher},
	TagSpecAcceptedPerVerified:    {GroupSpecDecode, 5030, Higher},
	TagSpecSteps:                  {GroupSpecDecode, 5040, Neither},
	TagSpecZeroStepRequests:       {GroupSpecDecode, 5045, Lower},
	TagSpecAcceptedDraftTokens:    {GroupNone, 5050, Higher},
	TagSpecDraftTokens:            {GroupNone, 5060, Neither},
	TagTotalSpecSteps:             {GroupNone, 5140, Neither},
	TagTotalSpecAcceptedDraftToks: {GroupNone, 5150, Higher},
	TagTotalSpecDraftTokens:       {GroupNone, 5160, Neither},

	// GPU power efficiency, from DCGM: AIPerf's "GPU Power Efficiency (NVIDIA)".
	TagEnergyDelayProduct:   {GroupPowerNVIDIA, 700, Lower},
	TagPerformancePerWatt:   {GroupPowerNVIDIA, 710, Higher},
	TagOutputTPSPerWatt:     {GroupPowerNVIDIA, 712, Higher},
	TagGoodputPerWatt:       {GroupPowerNVIDIA, 714, Higher},
	TagAverageGPUPower:      {GroupPowerNVIDIA, 720, Lower},
	TagTotalGPUEnergy:       {GroupPowerNVIDIA, 730, Lower},
	TagTotalGPUPower:        {GroupPowerNVIDIA, 740, Lower},
	TagEnergyPerTotalToken:  {GroupPowerNVIDIA, 745, Lower},
	TagEnergyPerOutputToken: {GroupPowerNVIDIA, 750, Lower},
	TagEnergyPerRequest:     {GroupPowerNVIDIA, 755, Lower},
	TagOutputTokensPerJoule: {GroupPowerNVIDIA, 760, Higher},
	TagEnergyPerUser:        {GroupPowerNVIDIA, 765, Lower},

	// The HTTP exchange, k6's phases (--show-trace-timing); the chunk
	// counts are exported only, as AIPerf's.
	TagHTTPBlocked:            {GroupHTTPTrace, 100, Lower},
	TagHTTPDNSLookup:          {GroupHTTPTrace, 110, Lower},
	TagHTTPConnecting:         {GroupHTTPTrace, 120, Lower},
	TagHTTPTLSHandshaking:     {GroupHTTPTrace, 125, Lower},
	TagHTTPSending:            {GroupHTTPTrace, 130, Lower},
	TagHTTPWaiting:            {GroupHTTPTrace, 140, Lower},
	TagHTTPReceiving:          {GroupHTTPTrace, 150, Lower},
	TagHTTPDuration:           {GroupHTTPTrace, 160, Lower},
	TagHTTPConnectionOverhead: {GroupHTTPTrace, 170, Lower},
	TagHTTPTotal:              {GroupHTTPTrace, 180, Lower},
	TagHTTPDataSent:           {GroupHTTPTrace, 190, Neither},
	TagHTTPDataReceived:       {GroupHTTPTrace, 200, Neither},
	TagHTTPConnectionReused:   {GroupHTTPTrace, 210, Higher},
	TagHTTPChunksSent:         {GroupNone, 0, Neither},
	TagHTTPChunksReceived:     {GroupNone, 0, Neither},
}

// GroupOf is the console group of a metric (GroupNone: exported only).
func GroupOf(tag string) Group { return catalog[tag].group }

// BetterOf is which way the metric is better; Neither for one where
// neither way is (token counts), or a tag this package does not know.
func BetterOf(tag string) Better { return catalog[tag].better }

// Known reports whether tag is a metric this package defines.
func Known(tag string) bool { return UnitOf(tag) != "" }

// InGroup returns the metrics of s in console group g, in AIPerf's display
// order (ties in the summary's order).
func (s Summary) InGroup(g Group) []Metric {
	var out []Metric
	for _, m := range s.Metrics {
		if GroupOf(m.Tag) == g {
			out = append(out, m)
		}
	}
	slices.SortStableFunc(out, func(a, b Metric) int { return cmp.Compare(catalog[a.Tag].order, catalog[b.Tag].order) })
	return out
}
