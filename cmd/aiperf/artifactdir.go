package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/aiperf-go/aiperf/internal/bench"
	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/report"
	"github.com/aiperf-go/aiperf/internal/result"
	"github.com/aiperf-go/aiperf/runner"
)

// writeExports writes the run's exports into dir, or, when that fails, into
// a new temporary directory, so a run that sent traffic always leaves them
// somewhere; it returns their paths and directory.
func writeExports(dir string, run *result.Run) ([]string, string, error) {
	paths, err := report.WriteAll(dir, run)
	if err == nil {
		return paths, dir, nil
	}
	err = fmt.Errorf("write exports to %s: %w", dir, err)
	tmp, tmpErr := os.MkdirTemp("", "aiperf-run-")
	if tmpErr == nil {
		var p []string
		if p, tmpErr = report.WriteAll(tmp, run); tmpErr == nil {
			return p, tmp, fmt.Errorf("%w; wrote them to %s instead", err, tmp)
		}
	}
	return nil, "", fmt.Errorf("%w; nor to a temporary directory: %w", err, tmpErr)
}

// cliCommand is the command line a run exports: the user's, which a trial
// child gets from its parent, else this process's; secrets redacted.
func cliCommand(args []string, spec runner.Spec, redact *plan.Redactor) string {
	if spec.CLICommand != "" {
		return redact.Redact(spec.CLICommand)
	}
	return redactedCommand(args, spec.Profile.URL, redact)
}

// defaultArtifactDir follows AIPerf: artifacts/<model>-openai-<endpoint>-<stimulus>,
// and ends with -<name> for a run given a --name (ours), so that two runs
// labelled apart (before, after) keep their exports apart.
func defaultArtifactDir(p plan.Profile, name string) string {
	dir := aiperfArtifactDir(p)
	if name != "" {
		dir += "-" + strings.NewReplacer("/", "_", ":", "_", string(filepath.Separator), "_").Replace(name)
	}
	return dir
}

// aiperfArtifactDir is AIPerf's default: artifacts/<model>-openai-<endpoint>-<stimulus>,
// the model the first of -m with _multi when there are several
// (UserConfig._get_artifact_model_name).
func aiperfArtifactDir(p plan.Profile) string {
	model := p.Model[0]
	if len(p.Model) > 1 {
		model += "_multi"
	}
	model = strings.NewReplacer("/", "_", ":", "_").Replace(model)
	stim := stimulus(p)
	// YAML phases: the stimulus of each profiling phase, so that two files
	// with different loads do not share a directory.
	var phases []string
	for _, ph := range p.Phases {
		switch {
		case ph.Kind != plan.KindProfiling:
		case ph.Rate > 0:
			phases = append(phases, fmt.Sprintf("request_rate%g", ph.Rate))
		default:
			phases = append(phases, fmt.Sprintf("concurrency%d", max(ph.Concurrency, 1)))
		}
	}
	if len(phases) > 0 {
		stim = strings.Join(phases, "-")
	}
	return filepath.Join("artifacts", fmt.Sprintf("%s-openai-%s-%s", model, p.EndpointType, stim))
}

// stimulus names p's load as AIPerf's UserConfig._get_artifact_stimulus
// does: fixed_schedule for a trace replayed on its timestamps,
// user_centric-users<N>-qps<Q>, else concurrency<C> and request_rate<R>
// (each when given, joined by "-"; concurrency1 when neither is), the
// rates written as Python writes a float (200.0, 2.5).
func stimulus(p plan.Profile) string {
	if fixed, _ := bench.Timestamped(p); p.FixedSchedule || fixed {
		return "fixed_schedule"
	}
	if p.UserCentricRate != nil {
		s := "user_centric"
		if p.NumUsers != nil {
			s += fmt.Sprintf("-users%d", *p.NumUsers)
		}
		return s + "-qps" + pyFloat(*p.UserCentricRate)
	}
	var parts []string
	if p.Concurrency != nil {
		parts = append(parts, fmt.Sprintf("concurrency%d", *p.Concurrency))
	}
	if p.RequestRate != nil {
		parts = append(parts, "request_rate"+pyFloat(*p.RequestRate))
	}
	if len(parts) == 0 {
		return "concurrency1"
	}
	return strings.Join(parts, "-")
}

// pyFloat writes f as Python's repr of a float: 200.0, 2.5, 1e-05, 1e+16.
func pyFloat(f float64) string {
	if a := math.Abs(f); a != 0 && (a < 1e-4 || a >= 1e16) {
		return strconv.FormatFloat(f, 'e', -1, 64)
	}
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.ContainsAny(s, ".") {
		s += ".0"
	}
	return s
}

// redactedCommand is "aiperf " + args with every secret redacted: the API
// key, secret header values and URL credentials. Matching the values rather
// than the flags catches every spelling (--api-key=K, -HName:V, -vH Name:V,
// --url=http://user:pw@host, ...); a URL's userinfo is also replaced as
// written, so no escaping of the password (p%61ss for pass) lets it through.
func redactedCommand(args []string, urls []string, redact *plan.Redactor) string {
	out := make([]string, len(args))
	for i, a := range args {
		for _, raw := range urls {
			if red := plan.RedactURL(raw); red != raw {
				a = strings.ReplaceAll(a, raw, red)
			}
		}
		out[i] = redact.Redact(a)
	}
	return "aiperf " + strings.Join(out, " ")
}
