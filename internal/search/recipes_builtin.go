package search

import (
	"fmt"
	"strconv"
	"strings"
)

// maxThroughput is max-throughput-ttft-sla and max-throughput-itl-sla:
// BO over concurrency (log scale) maximising output token throughput under
// p95 TTFT (or ITL) below the flag's threshold.
func maxThroughput(name string, in RecipeInputs) (*Recipe, error) {
	flag, tag, x := "--ttft-sla-ms", tagTTFT, in.TTFTSLAms
	if name == RecipeMaxThroughputITL {
		var err error
		if x, err = itlSLA(name, in); err != nil {
			return nil, err
		}
		flag, tag = "--itl-sla-ms (or --tpot-sla-ms)", tagITL
	}
	if x == nil {
		return nil, fmt.Errorf("recipe %q requires %s (the SLA threshold in milliseconds); pass it alongside --search-recipe", name, flag)
	}
	if err := positive(flag, x); err != nil {
		return nil, err
	}
	if err := requireStreaming(name, tag+" is a streaming-only metric", in); err != nil {
		return nil, err
	}
	space, err := concurrencySpace(in, true)
	if err != nil {
		return nil, err
	}
	filters := append([]Filter{{Metric: tag, Stat: "p95", Op: "lt", Threshold: *x}}, in.SearchSLA...)
	return &Recipe{Config: Config{Planner: PlannerBayesian, Space: space, Objective: throughputObjective,
		Filters: filters, MaxIterations: 30, InitialPoints: 5}}, nil
}

// maxConcurrency is max-concurrency-under-sla: the highest concurrency
// where every SLA filter passes, by style.
func maxConcurrency(in RecipeInputs) (*Recipe, error) {
	name := RecipeMaxConcurrency
	filters, err := slaFilters(name, in)
	if err != nil {
		return nil, err
	}
	if len(filters) == 0 {
		return nil, fmt.Errorf("recipe %q requires at least one of --ttft-sla-ms, --itl-sla-ms (--tpot-sla-ms), --e2e-sla-ms, --error-rate-sla or --search-sla", name)
	}
	if streamingOnly(filters) {
		if err := requireStreaming(name, "its SLA filters read TTFT or ITL, streaming-only metrics", in); err != nil {
			return nil, err
		}
	}
	style := in.Style
	if style == "" {
		style = StyleMonotonic
	}
	space, err := concurrencySpace(in, style == StyleBO)
	if err != nil {
		return nil, err
	}
	cfg := Config{Space: space, Objective: throughputObjective, Filters: filters}
	r := &Recipe{}
	switch style {
	case StyleMonotonic:
		cfg.Planner, cfg.MaxIterations, cfg.InitialPoints = PlannerMonotonic, 20, 1
	case StyleSmoothIsotonic:
		cfg.Planner, cfg.MaxIterations, cfg.InitialPoints = PlannerSmoothIsotonic, 30, 1
	case StyleBO:
		cfg.Planner, cfg.MaxIterations, cfg.InitialPoints = PlannerBayesian, 30, 5
	case StyleGrid:
		steps, err := LogSteps(space[0].Lo, space[0].Hi, 8)
		if err != nil {
			return nil, err
		}
		cfg.Planner, cfg.Grid = PlannerGrid, product(steps)
		r.PostProcess = &PostProcess{Handler: HandlerSLABreach, File: "sla_breach.json"}
	case "optuna":
		return nil, fmt.Errorf("recipe %q: --search-style optuna needs AIPerf's Optuna stack, which aiperf-go does not have; use bo (the same constrained BO on a Gaussian process)", name)
	default:
		return nil, fmt.Errorf("recipe %q: unknown --search-style %q; use monotonic, smooth_isotonic, bo or grid", name, style)
	}
	r.Config = cfg
	return r, nil
}

// maxGoodput is max-goodput-under-slo (DistServe's formulation): BO over
// concurrency maximising goodput, the per-request SLOs set as the profile's
// --goodput, under good_request_fraction ≥ --slo-attainment-fraction.
func maxGoodput(in RecipeInputs) (*Recipe, error) {
	name := RecipeMaxGoodput
	itl, err := itlSLA(name, in)
	if err != nil {
		return nil, err
	}
	var slos []string
	for _, s := range []struct {
		flag, tag string
		x         *float64
	}{{"--ttft-sla-ms", tagTTFT, in.TTFTSLAms}, {"--tpot-sla-ms", tagITL, itl}, {"--e2e-sla-ms", tagE2E, in.E2ESLAms}} {
		if err := positive(s.flag, s.x); err != nil {
			return nil, err
		}
		if s.x != nil {
			slos = append(slos, s.tag+":"+strconv.FormatFloat(*s.x, 'g', -1, 64))
		}
	}
	if len(slos) == 0 {
		return nil, fmt.Errorf("recipe %q requires per-request SLOs: --ttft-sla-ms, --tpot-sla-ms and/or --e2e-sla-ms", name)
	}
	if in.TTFTSLAms != nil || itl != nil {
		if err := requireStreaming(name, "its TTFT/TPOT SLOs are streaming-only metrics", in); err != nil {
			return nil, err
		}
	}
	frac := 0.95
	if in.SLOAttainmentFraction != nil {
		frac = *in.SLOAttainmentFraction
	}
	if !(frac > 0 && frac <= 1) {
		return nil, fmt.Errorf("--slo-attainment-fraction must be in (0, 1] (got %g)", frac)
	}
	space, err := concurrencySpace(in, true)
	if err != nil {
		return nil, err
	}
	filters := append([]Filter{{Metric: tagGoodFrac, Stat: "avg", Op: "ge", Threshold: frac}}, in.SearchSLA...)
	return &Recipe{
		Config: Config{Planner: PlannerBayesian, Space: space, Objective: Objective{Metric: tagGoodput, Stat: "avg", Direction: Maximize},
			Filters: filters, MaxIterations: 30, InitialPoints: 5},
		Fixed: map[string]any{"goodput": strings.Join(slos, " ")},
	}, nil
}

// gridRecipe is a grid of the given parameters' value lists, read through
// a post-process; its objective is the post-process metric, so the history
// carries the curve too.
func gridRecipe(params []Param, axes [][]float64, obj Objective, pp *PostProcess) *Recipe {
	return &Recipe{Config: Config{Planner: PlannerGrid, Space: axisSpace(params, axes), Objective: obj, Grid: product(axes...)}, PostProcess: pp}
}

// concurrencyRamp is concurrency-ramp: a log-spaced concurrency grid and
// the first concurrency whose p99 request latency exceeds the lowest
// one's by --degradation-threshold.
func concurrencyRamp(in RecipeInputs) (*Recipe, error) {
	axis, err := logAxis("concurrency", in.ConcurrencyMin, in.ConcurrencyMax, in.ConcurrencySteps, 1, 1000, 8)
	if err != nil {
		return nil, err
	}
	thr := 0.20
	if in.DegradationThreshold != nil {
		thr = *in.DegradationThreshold
	}
	if !(thr > 0 && thr < 1) {
		return nil, fmt.Errorf("--degradation-threshold must be in (0, 1), e.g. 0.20 for 20%% (got %g)", thr)
	}
	metric, st := in.DegradationMetric, in.DegradationStat
	if metric == "" {
		metric = tagE2E
	}
	if st == "" {
		st = "p99"
	}
	obj := Objective{Metric: metric, Stat: st, Direction: Minimize}
	if err := obj.check(); err != nil {
		return nil, fmt.Errorf("recipe %q: --degradation-stat: %w", RecipeConcurrencyRamp, err)
	}
	if metric == tagTTFT || metric == tagITL {
		if err := requireStreaming(RecipeConcurrencyRamp, metric+" is a streaming-only metric", in); err != nil {
			return nil, err
		}
	}
	return gridRecipe([]Param{paramConcurrency}, [][]float64{axis}, obj,
		&PostProcess{Handler: HandlerDegradationKnee, File: "degradation_knee.json", Metric: metric, Stat: st, Threshold: thr}), nil
}

// prefillCurve is prefill-ttft-curve: a log-spaced ISL grid at concurrency
// 1, and TTFT(ISL) fitted linear (quadratic when r² < 0.85).
func prefillCurve(in RecipeInputs) (*Recipe, error) {
	if err := requireStreaming(RecipePrefillCurve, "TTFT is a streaming-only metric", in); err != nil {
		return nil, err
	}
	axis, err := logAxis("isl", in.ISLMin, in.ISLMax, in.ISLSteps, 256, 32768, 8)
	if err != nil {
		return nil, err
	}
	r := gridRecipe([]Param{paramISL}, [][]float64{axis}, Objective{Metric: tagTTFT, Stat: "avg", Direction: Minimize},
		&PostProcess{Handler: HandlerTTFTCurve, File: "prefill_curve.json", Metric: tagTTFT, Stat: "avg", Threshold: CurveR2Floor})
	r.Fixed = map[string]any{"concurrency": 1}
	return r, nil
}

// decodeCurve is decode-itl-curve: a concurrency × OSL log grid (6 × 4
// over [1, 200] × [64, 1024]) and the as-measured ITL surface.
func decodeCurve(in RecipeInputs) (*Recipe, error) {
	if err := requireStreaming(RecipeDecodeCurve, "ITL is a streaming-only metric", in); err != nil {
		return nil, err
	}
	conc, err := logAxis("concurrency", in.ConcurrencyMin, in.ConcurrencyMax, in.ConcurrencySteps, 1, 200, 6)
	if err != nil {
		return nil, err
	}
	osl, err := logAxis("osl", in.OSLMin, in.OSLMax, in.OSLSteps, 64, 1024, 4)
	if err != nil {
		return nil, err
	}
	return gridRecipe([]Param{paramConcurrency, paramOSL}, [][]float64{conc, osl}, Objective{Metric: tagITL, Stat: "avg", Direction: Minimize},
		&PostProcess{Handler: HandlerITLSurface, File: "decode_itl_surface.json", Metric: tagITL, Stat: "avg"}), nil
}

// paretoSweep is pareto-sweep: the paired ISL/OSL shapes × concurrency
// cells, and which are Pareto-optimal on (TTFT p95 lower, output token
// throughput higher). An axis with one value is a fixed option, not a
// searched parameter.
func paretoSweep(in RecipeInputs) (*Recipe, error) {
	name := RecipeParetoSweep
	if err := requireStreaming(name, "output_token_throughput is a streaming-only metric", in); err != nil {
		return nil, err
	}
	pairs, err := ParseISLOSLPairs(in.ISLOSLPairs)
	if err != nil {
		return nil, err
	}
	conc := []int{1, 4, 16, 64, 256}
	if len(in.Concurrency) > 0 {
		conc = in.Concurrency
	}
	if len(pairs)*len(conc) < 2 {
		return nil, fmt.Errorf("recipe %q: a Pareto sweep with a single point is meaningless; pass at least 2 pairs or at least 2 --concurrency values", name)
	}
	var cells [][3]float64
	for _, p := range pairs {
		for _, c := range conc {
			if c < 1 {
				return nil, fmt.Errorf("recipe %q: --concurrency values must be ≥ 1 (got %d)", name, c)
			}
			cells = append(cells, [3]float64{float64(p[0]), float64(p[1]), float64(c)})
		}
	}
	r := &Recipe{Fixed: map[string]any{},
		Config:      Config{Planner: PlannerGrid, Objective: throughputObjective, Extra: []string{tagTTFT + ".p95"}},
		PostProcess: &PostProcess{Handler: HandlerPareto, File: "pareto_sweep.json", Metric: tagTTFT, Stat: "p95", YMetric: tagThroughput, YStat: "avg"}}
	var varying []int
	for i, p := range []Param{paramISL, paramOSL, paramConcurrency} {
		lo, hi := cells[0][i], cells[0][i]
		for _, c := range cells {
			lo, hi = min(lo, c[i]), max(hi, c[i])
		}
		if lo == hi {
			r.Fixed[p.Name] = int(lo)
			continue
		}
		p.Lo, p.Hi = lo, hi
		r.Config.Space, varying = append(r.Config.Space, p), append(varying, i)
	}
	for _, c := range cells {
		pt := make(Point, len(varying))
		for j, i := range varying {
			pt[j] = c[i]
		}
		r.Config.Grid = append(r.Config.Grid, pt)
	}
	return r, nil
}

// ParseISLOSLPairs reads --isl-osl-pairs: "<isl>/<osl>,<isl>/<osl>,...",
// positive ints, whitespace tolerated, no duplicates.
func ParseISLOSLPairs(s string) ([][2]int, error) {
	if strings.TrimSpace(s) == "" {
		return nil, fmt.Errorf("recipe %q requires --isl-osl-pairs, e.g. 128/128,512/256,2048/512", RecipeParetoSweep)
	}
	var out [][2]int
	for _, tok := range strings.Split(s, ",") {
		tok = strings.TrimSpace(tok)
		a, b, ok := strings.Cut(tok, "/")
		if !ok || strings.Contains(b, "/") {
			return nil, fmt.Errorf("--isl-osl-pairs: '%s' expected '<isl>/<osl>' (one slash)", tok)
		}
		isl, err1 := strconv.Atoi(strings.TrimSpace(a))
		osl, err2 := strconv.Atoi(strings.TrimSpace(b))
		if err1 != nil || err2 != nil || isl < 1 || osl < 1 {
			return nil, fmt.Errorf("--isl-osl-pairs: '%s' both sides must be a positive int", tok)
		}
		pair := [2]int{isl, osl}
		for _, p := range out {
			if p == pair {
				return nil, fmt.Errorf("--isl-osl-pairs: duplicate pair '%d/%d'", isl, osl)
			}
		}
		out = append(out, pair)
	}
	return out, nil
}
