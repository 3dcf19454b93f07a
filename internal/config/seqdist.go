package config

import (
	"encoding/json"
	"fmt"

	"go.yaml.in/yaml/v3"

	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/seqdist"
)

// sequenceDistribution reads prompts.sequence_distribution: AIPerf's list
// of buckets {isl, osl, probability}, isl and osl each a number or {mean,
// stddev}, or a string of --seq-dist's grammar. A bucket of probability 0
// is disabled, as in AIPerf.
func (d *decoder) sequenceDistribution(path string, v *yaml.Node) {
	if v.Kind == yaml.ScalarNode {
		s, ok := d.str(path, v)
		if !ok {
			return
		}
		if _, err := seqdist.Parse(s); err != nil {
			d.errorf(v, path, "%v", err)
			return
		}
		d.setSequenceDistribution(path, v, s)
		return
	}
	if v.Kind != yaml.SequenceNode || len(v.Content) == 0 {
		d.errorf(v, path, "expected a list of buckets {isl, osl, probability} or a string such as \"64,32:70;256,128:30\", got %s",
			d.describe(v))
		return
	}
	var buckets []seqdist.Bucket
	errs := len(d.errs)
	for i, item := range v.Content {
		at := fmt.Sprintf("%s[%d]", path, i)
		if item = deref(item); !d.mapping(item, at) {
			continue
		}
		if b, ok := d.bucket(at, item); ok && b.Weight > 0 {
			buckets = append(buckets, b)
		}
	}
	if len(d.errs) > errs {
		return
	}
	if len(buckets) == 0 {
		d.errorf(v, path, "every bucket has probability 0: at least one must be positive")
		return
	}
	text, err := json.Marshal(map[string][]seqdist.Bucket{"pairs": buckets})
	if err != nil {
		d.errorf(v, path, "%v", err)
		return
	}
	d.setSequenceDistribution(path, v, string(text))
}

func (d *decoder) setSequenceDistribution(path string, v *yaml.Node, text string) {
	d.f.Profile.SequenceDistribution = text
	d.mark("sequence_distribution", v, path)
}

// bucket reads one bucket; ok is false when it was refused.
func (d *decoder) bucket(path string, v *yaml.Node) (seqdist.Bucket, bool) {
	var b seqdist.Bucket
	errs := len(d.errs)
	set := map[string]bool{}
	length := func(key string, mean *int, sd *float64) field {
		return field{keys(key), func(p string, n *yaml.Node) {
			set[key] = true
			before := len(d.errs)
			d.length(p+" mean", p+" stddev", true, func(m float64) { *mean = int(m) }, func(s float64) { *sd = s })(p, n)
			if len(d.errs) == before && (*mean < 1 || *mean > seqdist.MaxTokens || *sd < 0 || *sd > seqdist.MaxTokens) {
				d.errorf(n, p, "expected a mean of 1 to %d tokens and a stddev of 0 to %d", seqdist.MaxTokens, seqdist.MaxTokens)
			}
		}}
	}
	d.fields(v, path, []field{
		length("isl", &b.ISL, &b.ISLStddev),
		length("osl", &b.OSL, &b.OSLStddev),
		{keys("probability"), func(p string, n *yaml.Node) {
			set["probability"] = true
			if x, ok := d.float(p, n); ok && x < 0 {
				d.errorf(n, p, "must be 0 (disabled) or more, got %g", x)
			} else {
				b.Weight = x
			}
		}},
		{keys("first_turn_isl"), d.notYet("first_turn_isl: (a bucket's own first-turn ISL)", "")},
	})
	for _, k := range []string{"isl", "osl", "probability"} {
		if !set[k] {
			d.errorf(v, path, "%s is required", k)
		}
	}
	return b, len(d.errs) == errs
}

// cacheBust reads prompts.cache_bust: AIPerf's {target: TARGET}, or the
// target alone.
func (d *decoder) cacheBust(path string, v *yaml.Node) {
	targets := []string{plan.CacheBustNone, plan.CacheBustSystemPrefix, plan.CacheBustSystemSuffix, plan.CacheBustFirstTurnPrefix,
		plan.CacheBustFirstTurnSuffix, plan.CacheBustWarmupIsolationSystem, plan.CacheBustWarmupIsolationFirstTurn}
	if v.Kind != yaml.MappingNode {
		d.opt("cache_bust", targets...)(path, v)
		return
	}
	d.fields(v, path, []field{{keys("target"), d.opt("cache_bust", targets...)}})
}
