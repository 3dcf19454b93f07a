package plan

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/aiperf-go/aiperf/internal/search"
)

// Sweep is a declared set of benchmark cells, each run Trials times.
type Sweep struct {
	Name            string  `json:"name"`
	Cells           []Cell  `json:"cells"`
	Trials          int     `json:"trials"`
	CooldownSeconds float64 `json:"cooldown_seconds,omitempty"`
	// CellCooldownSeconds, when set, is the pause when the next trial is of
	// another cell (AIPerf's --parameter-sweep-cooldown-seconds);
	// CooldownSeconds is then the pause between trials of one cell.
	CellCooldownSeconds *float64 `json:"cell_cooldown_seconds,omitempty"`
	// Order is OrderIndependent (every trial of a cell, then the next cell)
	// or OrderRepeated (every cell's first trial, then every cell's second:
	// AIPerf's default --parameter-sweep-mode).
	Order string `json:"order,omitempty"`
	// Source is where the sweep was declared (file:line), for messages.
	Source string `json:"source,omitempty"`
	// WarmupFirstTrialOnly drops the warmup from every cell's trials after
	// the first (AIPerf's multi_run.disable_warmup_after_first), unless a
	// cell resets the KV cache before each trial (Sweep.ResetsCache): its
	// reset empties the cache the warmups filled, so every trial keeps its
	// warmup.
	WarmupFirstTrialOnly bool `json:"warmup_first_trial_only,omitempty"`
	// VarySeedPerTrial gives every trial of a cell its own seed, TrialSeed
	// of the cell's (AIPerf's multi_run.vary_seed_per_trial); else a
	// cell's trials share its seed.
	VarySeedPerTrial bool `json:"vary_seed_per_trial,omitempty"`
	// Convergence stops adding trials to a cell once its criterion holds
	// (AIPerf's --convergence-metric with --num-profile-runs): a cell runs
	// at least min(3, Trials) trials and at most Trials; nil runs them all.
	Convergence *search.Convergence `json:"convergence,omitempty"`
}

// Param is one swept parameter of a cell: a Profile option name and its value.
type Param struct {
	Name  string `json:"name"`
	Value any    `json:"value"`
}

// Cell is one point of a sweep: the base profile with its parameters applied.
type Cell struct {
	ID      string  `json:"id"`    // stable: hash of sweep name + sorted parameters
	Label   string  `json:"label"` // directory-safe, e.g. concurrency_4__synthetic_input_tokens_mean_128
	Index   int     `json:"index"` // position in the sweep, from 0
	Params  []Param `json:"params"`
	Profile Profile `json:"profile"`
}

// Trial is one run of a cell. Number counts from 1.
type Trial struct {
	Sweep  string `json:"sweep"`
	Cell   Cell   `json:"cell"`
	Number int    `json:"trial"`
}

// Key identifies a trial across invocations (for --resume).
func (t Trial) Key() string { return fmt.Sprintf("%s/%04d", t.Cell.ID, t.Number) }

// Dir is the trial's directory under the sweep's artifact root:
// <sweep>/<cell label>/trial_NNNN, each part a single directory name (see
// DirName).
func (t Trial) Dir() string {
	return fmt.Sprintf("%s/%s/trial_%04d", DirName(t.Sweep), DirName(t.Cell.Label), t.Number)
}

// Sweep orders (AIPerf's --parameter-sweep-mode).
const (
	OrderIndependent = "independent"
	OrderRepeated    = "repeated"
)

// TrialList expands the sweep into trials: trial-major within each cell
// (every trial of cell 0, then cell 1, ...), or with OrderRepeated every
// cell's trial 1, then every cell's trial 2, ...
func (s Sweep) TrialList() []Trial {
	var out []Trial
	warmEach := s.ResetsCache() // read once: linear in the trials
	if s.Order == OrderRepeated {
		for n := 1; n <= max(1, s.Trials); n++ {
			for _, c := range s.Cells {
				out = append(out, s.trial(c, n, warmEach))
			}
		}
		return out
	}
	for _, c := range s.Cells {
		for n := 1; n <= max(1, s.Trials); n++ {
			out = append(out, s.trial(c, n, warmEach))
		}
	}
	return out
}

// ResetsCache reports whether a cell of the sweep resets the KV cache
// before each trial: its trials then empty the cache the others' warmups
// filled (trials of cells on one server alternate, OrderRepeated), so every
// trial of every cell keeps its warmup.
func (s Sweep) ResetsCache() bool {
	return slices.ContainsFunc(s.Cells, func(c Cell) bool { return c.Profile.ResetsCache() })
}

// trial is cell's trial n, without its warmup after the first when
// WarmupFirstTrialOnly and no cell resets the KV cache (warmEach), with its
// own seed when VarySeedPerTrial.
func (s Sweep) trial(c Cell, n int, warmEach bool) Trial {
	if s.WarmupFirstTrialOnly && n > 1 && !warmEach {
		c.Profile = c.Profile.WithoutWarmup()
	}
	if s.VarySeedPerTrial {
		c.Profile.RandomSeed = TrialSeed(c.Profile.RandomSeed, c.Label, n)
	}
	return Trial{Sweep: s.Name, Cell: c, Number: n}
}

// ResetsCache reports whether every run of p POSTs a KV-cache reset
// before any load (--reset-kv-cache, any of its path, timeout or retry
// settings, or reset_kv_cache: in a config file): each trial of a sweep of
// p then starts from an empty cache, whatever the trials before it did.
func (p *Profile) ResetsCache() bool { return p.ResetHook().Enabled }

// HasWarmup reports whether a run of p warms up before it profiles: a
// listed warmup phase, or a warmup flag (--warmup-request-count,
// --warmup-duration, --num-warmup-sessions) that makes one.
func (p *Profile) HasWarmup() bool {
	return slices.ContainsFunc(p.PhaseList(), func(ph Phase) bool { return ph.Kind == KindWarmup })
}

// ResetKeepsWarmup reports whether the sweep's KV-cache reset keeps a
// warmup that WarmupFirstTrialOnly would drop: several trials, a cell that
// resets the cache (ResetsCache) and a cell with a warmup (HasWarmup).
// Only then is ResetKeepsWarmupNote true: without a warmup every trial
// runs the same with or without the rule.
func (s Sweep) ResetKeepsWarmup() bool {
	return s.WarmupFirstTrialOnly && s.Trials > 1 && s.ResetsCache() &&
		slices.ContainsFunc(s.Cells, func(c Cell) bool { return c.Profile.HasWarmup() })
}

// ResetKeepsWarmupNote is what a multi-run says, once, when
// WarmupFirstTrialOnly meets a cell that resets the KV cache and a warmup
// (Sweep.ResetKeepsWarmup).
const ResetKeepsWarmupNote = "a trial resets the KV cache before its load (reset_kv_cache / --reset-kv-cache), " +
	"so every trial runs its warmup: disable_warmup_after_first (--profile-run-disable-warmup-after-first, " +
	"on by default) does not apply, as trials after the first would otherwise measure the cache the reset " +
	"just emptied, not the warmed server"

// TrialSeed is trial n's seed of a cell labelled label whose seed is seed:
// the first 63 bits of SHA-256 over the three, as AIPerf derives a seed per
// trial (a different workload each trial, the same on every rerun).
func TrialSeed(seed int64, label string, n int) int64 {
	sum := sha256.Sum256(fmt.Appendf(nil, "%d\x00%s\x00%d", seed, label, n))
	return int64(binary.BigEndian.Uint64(sum[:8]) >> 1)
}

// Cooldown is the pause before trial next when prev ran just before it.
func (s Sweep) Cooldown(prev, next Trial) float64 {
	if s.CellCooldownSeconds != nil && prev.Cell.ID != next.Cell.ID {
		return *s.CellCooldownSeconds
	}
	return s.CooldownSeconds
}

// CellID hashes the sweep name and the parameters, sorted by name, into a
// short stable identifier.
func CellID(sweep string, params []Param) string {
	sorted := append([]Param(nil), params...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	h := sha256.New()
	h.Write([]byte(sweep))
	for _, p := range sorted {
		fmt.Fprintf(h, "\x00%s=%s", p.Name, canonical(p.Value))
	}
	return hex.EncodeToString(h.Sum(nil))[:12]
}

// Secret reports whether the parameter's value carries a secret (an API key,
// a secret header value, URL credentials or a secret query parameter, a
// secret --extra-inputs key's value). Such a value must not be swept: it
// would be written into cell labels, artifact paths and the store. marked
// are the names the profile marks secret (--redact-param).
func (p Param) Secret(marked []string) bool {
	var values []string
	switch v := p.Value.(type) {
	case string:
		values = []string{v}
	case []string:
		values = v
	case []any:
		for _, e := range v {
			if s, ok := e.(string); ok {
				values = append(values, s)
			}
		}
	}
	for _, v := range values {
		switch p.Name {
		case "api_key":
			return v != ""
		case "header":
			k, _, _ := strings.Cut(v, ":")
			if IsSecretHeader(k) {
				return true
			}
		case "url", "server_metrics", "gpu_telemetry":
			if redactURL(v, marked) != v {
				return true
			}
		case "extra_inputs":
			if len(extraSecrets([]string{v}, marked)) > 0 {
				return true
			}
		case "reset_kv_cache_path", "server_profiler_start_path", "server_profiler_stop_path":
			if len(querySecrets(v, marked)) > 0 {
				return true
			}
		}
	}
	return false
}

// Digest identifies what a sweep runs: a SHA-256 over its name and every
// cell's id, parameters and redacted profile. Trials and cooldown are left
// out, so raising trials and resuming runs only the new trials; a different
// --set value or an edited loaded module gives a different digest.
func (s Sweep) Digest() string {
	h := sha256.New()
	enc := json.NewEncoder(h)
	_ = enc.Encode(s.Name) // writes to a hash never fail
	for _, c := range s.Cells {
		_ = enc.Encode(c.ID)
		_ = enc.Encode(c.Params)
		_ = enc.Encode(c.Profile.Redacted().WithoutIntegrations())
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Combinations are the points of lists of the given lengths, each the
// index into every list: every combination, the last list varying fastest
// (a grid), or with zip the lists taken element-wise (they must share one
// length; the first's is used).
func Combinations(lengths []int, zip bool) [][]int {
	if len(lengths) == 0 {
		return nil
	}
	if zip {
		out := make([][]int, lengths[0])
		for j := range out {
			out[j] = slices.Repeat([]int{j}, len(lengths))
		}
		return out
	}
	out := [][]int{nil}
	for _, n := range lengths {
		next := make([][]int, 0, len(out)*n)
		for _, c := range out {
			for j := range n {
				next = append(next, append(slices.Clone(c), j))
			}
		}
		out = next
	}
	return out
}

// CheckConvergence checks the sweep's convergence criterion (nil: none)
// against each of its cells (search.Convergence.CheckCell), naming the
// first cell it cannot be judged on when there are several.
func (s Sweep) CheckConvergence() error {
	if s.Convergence == nil {
		return nil
	}
	for _, c := range s.Cells {
		label := c.Label
		if len(s.Cells) == 1 {
			label = ""
		}
		p := c.Profile
		if err := s.Convergence.CheckCell(label, p.Streaming, p.Goodput != "", p.ExportLevel != "summary"); err != nil {
			return err
		}
	}
	return nil
}
