package traceanalysis

import (
	"context"
	"fmt"

	"github.com/aiperf-go/aiperf/internal/cachesim"
	"github.com/aiperf-go/aiperf/internal/dataset"
	"github.com/aiperf-go/aiperf/internal/kvcache"
	"github.com/aiperf-go/aiperf/internal/metrics"
)

// DefaultBlockSize is AIPerf's tokens per hash id.
const DefaultBlockSize = 512

// Options say how to read a trace.
type Options struct {
	// BlockSize is the tokens per hash id (AIPerf's --block-size).
	BlockSize int
	// Simulate, when set, replays the trace through a KV cache of that
	// configuration, its rows kept in the first pass and replayed after
	// the second.
	Simulate *cachesim.Config
	// Simulating, when set, is called as the replay starts, with the
	// number of requests it replays (the longest part of a large trace's
	// analysis: a progress line).
	Simulating func(requests int)
	// AsProfile checks the trace as aiperf profile checks a file given no
	// other flag (dataset.ScanOptions).
	AsProfile bool
}

// analysis is the state of the two passes.
type analysis struct {
	o                     Options
	isl, osl, hit         []float64
	context, uniquePrompt []float64
	blocks                *blocks // the prefix structure, the infinite cache
	roots                 *counts // first hash ids
	totalPrefixes         int
	sim                   *cachesim.Simulator
}

// Analyze reads the mooncake trace at path and returns its report. A
// malformed record, or hash ids that do not fit their input length, is an
// error listing every problem (dataset.ScanTraceWith). When ctx is done it
// stops, in the passes over the file or in the simulation, with ctx's
// error and no report.
func Analyze(ctx context.Context, path string, o Options) (*Report, error) {
	if o.BlockSize < 1 {
		return nil, fmt.Errorf("--block-size must be at least 1 token, got %d", o.BlockSize)
	}
	a := &analysis{o: o, blocks: newBlocks(), roots: newCounts()}
	if o.Simulate != nil {
		var err error
		if a.sim, err = cachesim.New(*o.Simulate); err != nil {
			return nil, err
		}
	}
	so := dataset.ScanOptions{BlockSize: o.BlockSize, AsProfile: o.AsProfile}
	if err := dataset.ScanTraceWith(ctx, path, so, a.first); err != nil {
		return nil, err
	}
	if err := dataset.ScanTraceWith(ctx, path, so, a.second); err != nil {
		return nil, err
	}
	r := a.report()
	if a.sim != nil {
		if o.Simulating != nil {
			o.Simulating(r.TotalRequests)
		}
		res, err := a.sim.Result(ctx)
		if err != nil {
			return nil, err
		}
		r.Simulation = &res
	}
	return r, nil
}

// first collects a row's lengths, its hit rate with an infinite cache
// (the share of its hash ids before the first one never seen, AIPerf's
// "dynamo algorithm") and its prefixes, and replays it in the simulator.
func (a *analysis) first(row dataset.TraceRow) error {
	if a.sim != nil {
		a.sim.Add(row)
	}
	a.isl = append(a.isl, float64(row.InputLength))
	a.osl = append(a.osl, float64(row.OutputLength))
	ids := row.HashIDs
	if len(ids) == 0 {
		return nil
	}
	k := 0
	for k < len(ids) && a.blocks.seen(ids[k]) {
		k++
	}
	a.hit = append(a.hit, float64(k)/float64(len(ids)))
	chain := uint64(0)
	for pos, id := range ids {
		chain = kvcache.Mix(chain ^ idKey(id))
		a.blocks.observe(pos, id, chain)
	}
	a.roots.add(idKey(ids[0]))
	a.totalPrefixes += len(ids)
	return nil
}

// second sets a row's context length, its hash blocks whose (position,
// id) recurs anywhere in the trace (all of input_length when every one
// does), and its unique prompt length, the rest.
func (a *analysis) second(row dataset.TraceRow) error {
	ids, isl := row.HashIDs, row.InputLength
	repeated := 0
	for pos, id := range ids {
		if a.blocks.positionRepeated(pos, id) {
			repeated++
		}
	}
	ctx := 0
	switch {
	case len(ids) == 0:
	case repeated == len(ids):
		ctx = isl
	default:
		ctx = repeated * a.o.BlockSize
	}
	a.context = append(a.context, float64(ctx))
	a.uniquePrompt = append(a.uniquePrompt, float64(isl-ctx))
	return nil
}

// idKey is a hash id's key in the sets.
func idKey(id int64) uint64 { return kvcache.Mix(uint64(id) ^ 0x6964) }

// positionKey is a (position, hash id) pair's key.
func positionKey(pos int, id int64) uint64 {
	return kvcache.Mix(idKey(id) + uint64(pos)*0x9e3779b97f4a7c15)
}

// report computes the statistics.
func (a *analysis) report() *Report {
	distinct, repeated := a.blocks.prefixes()
	r := &Report{
		TotalRequests:    len(a.isl),
		UniquePrefixes:   distinct,
		NumPrefixGroups:  a.roots.repeats,
		PrefixReuseRatio: 0,
		ISLStats:         statsOf(a.isl),
		OSLStats:         statsOf(a.osl),
		ContextStats:     statsOf(a.context),
		UniqueStats:      statsOf(a.uniquePrompt),
		HitRateStats:     statsOf(a.hit),
	}
	if r.HitRateStats != nil {
		r.CacheHitRate = r.HitRateStats.Mean
	}
	if s := r.ISLStats; s != nil {
		r.MinISL, r.MaxISL, r.AvgISL = int(s.Min), int(s.Max), s.Mean
	}
	if s := r.OSLStats; s != nil {
		r.MinOSL, r.MaxOSL, r.AvgOSL = int(s.Min), int(s.Max), s.Mean
	}
	if a.totalPrefixes > 0 { // occurrences of prefixes seen more than once
		r.PrefixReuseRatio = float64(a.totalPrefixes-(distinct-repeated)) / float64(a.totalPrefixes)
	}
	return r
}

// statsOf is AIPerf's MetricStats of values (nil for none).
func statsOf(values []float64) *MetricStats {
	if len(values) == 0 {
		return nil
	}
	s := metrics.Compute(values)
	return &MetricStats{Mean: s.Avg, StdDev: s.Std, Min: s.Min, P25: s.P25, Median: s.P50, P75: s.P75, Max: s.Max}
}
