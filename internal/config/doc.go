// Package config reads `aiperf profile --config FILE`: a YAML file in the
// shape of AIPerf's configuration (schemaVersion "2.0", a `benchmark:` body
// with model, endpoint, dataset, tokenizer, phases and artifacts) and turns it
// into a plan.Profile.
//
// It supports a deliberate subset of AIPerf's schema and rejects everything
// else: every unknown key, wrong type or unsupported section is reported with
// the file, line and dotted key path, all problems at once. ${VAR} and
// ${VAR:default} in scalar values are replaced from the environment before
// the values are interpreted, as AIPerf does. Keys are snake_case; their
// camelCase spellings are accepted too. Range checks are left to
// plan.Profile.Check, which runs after the CLI flags are overlaid.
package config
