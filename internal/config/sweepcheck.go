package config

import (
	"fmt"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/aiperf-go/aiperf/internal/plan"
)

// notSwept is why a secret may not be a sweep's value, as the Starlark
// path says it.
const notSwept = "cannot be swept: its value is a secret and would be written into cell labels, artifact paths " +
	"and the store; set it on the base profile (the benchmark: body; one sweep per credential)"

// checkParam refuses a grid or zip parameter before the sweep expands:
// a path whose first key the body does not have (a bare name being a
// profiling phase's field, or one of the body's keys), and a value that is
// a secret by its key's name (endpoint.api_key). Variations refuses the
// secrets only the decoded profile reveals.
func (d *decoder) checkParam(k *yaml.Node, values []*yaml.Node) bool {
	at := join(d.paramsPath(), k.Value)
	head, _, dotted := strings.Cut(k.Value, ".")
	if !dotted || snake(head) != "variables" {
		fs := d.benchmarkFields()
		if !dotted {
			for _, name := range phaseSugar {
				fs = append(fs, field{keys(name), nil})
			}
		}
		if !slices.ContainsFunc(fs, func(f field) bool { return slices.Contains(f.names, snake(head)) }) {
			d.errorf(k, at, "unknown key %q%s", head, suggest(snake(head), fs))
			return false
		}
	}
	for _, v := range values {
		if sweptSecret(plan.Param{Name: k.Value, Value: scalarValue(v)}, nil, nil) {
			d.errorf(v, at, notSwept)
			return false
		}
	}
	return true
}

// sweptSecret reports whether a swept value carries a secret that would
// reach cell labels, artifact paths and the store: the value of a secret
// option named by the path's last key (plan.Param.Secret, as the Starlark
// path asks it: endpoint.api_key is api_key), or one that r redacts: a
// secret of the variation's profile that not every variation shares (an
// API key set from a swept variable, a secret header or URL credentials
// inside a swept object). marked are the profile's --redact-param names.
func sweptSecret(prm plan.Param, marked []string, r *plan.Redactor) bool {
	leaf := snake(prm.Name[strings.LastIndex(prm.Name, ".")+1:])
	if (plan.Param{Name: leaf, Value: prm.Value}).Secret(marked) {
		return true
	}
	text := fmt.Sprint(prm.Value)
	return r.Redact(text) != text
}

// secretVariations refuses the sweep when a variation's parameter carries
// one of the variation's secrets that vary with the sweep (a key every
// variation shares, set once in the body, may also be a substring of a
// swept model name: "EMPTY" of "EMPTY-x"), once per parameter; it reports
// whether any did.
func (d *decoder) secretVariations(points []point, profiles []*plan.Profile) bool {
	shared := map[string]int{}
	decoded := 0
	for _, p := range profiles {
		if p != nil {
			decoded++
			for _, s := range uniq(p.Secrets()) {
				shared[s]++
			}
		}
	}
	found := false
	reported := map[string]bool{}
	for i, p := range points {
		if profiles[i] == nil {
			continue
		}
		own := slices.DeleteFunc(uniq(profiles[i].Secrets()), func(s string) bool { return shared[s] == decoded })
		r := plan.NewRedactor(own...)
		for j, prm := range p.params {
			if at := p.at[j]; !reported[at.path] && sweptSecret(prm, profiles[i].RedactParam, r) {
				reported[at.path], found = true, true
				d.errorf(at.n, at.path, notSwept)
			}
		}
	}
	return found
}

// uniq is ss sorted without repeats.
func uniq(ss []string) []string {
	ss = slices.Clone(ss)
	slices.Sort(ss)
	return slices.Compact(ss)
}

// variationErrors names each variation's problems by its label, saying
// once, unlabelled, a problem that every variation has.
func variationErrors(perVariation [][]error, names []string) []error {
	count := map[string]int{}
	for _, errs := range perVariation {
		for _, err := range errs {
			count[err.Error()]++
		}
	}
	var out []error
	said := map[string]bool{}
	for i, errs := range perVariation {
		for _, err := range errs {
			e, ok := err.(*Error)
			switch text := err.Error(); {
			case count[text] == len(perVariation) && said[text]:
			case count[text] == len(perVariation) || !ok:
				said[text] = true
				out = append(out, err)
			default:
				e.Msg += " (sweep variation " + names[i] + ")"
				out = append(out, e)
			}
		}
	}
	return out
}
