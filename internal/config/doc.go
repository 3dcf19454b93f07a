// Package config reads `aiperf profile --config FILE`: a YAML file in
// AIPerf's configuration format, turned into a plan.Profile per sweep
// variation.
//
// It reads AIPerf's current format, schema 2.0 (the benchmark body under
// benchmark:, the envelope keys sweep:, multi_run:, variables: and
// random_seed beside it, sweep.parameters naming paths in the body), and
// the older shapes AIPerf's own loader still migrates (the flat shape with
// the body's keys at the top level, sweep.variables, scenario runs holding
// body keys): normalize rewrites those into 2.0 in memory, noting it, and
// Migrate rewrites a file. File.Schema says which version a file was in.
//
// Every AIPerf key of the documented sections is either read or refused
// as "not supported yet" naming what to do instead; every unknown key,
// wrong type or unsupported value is reported with the file, line and
// dotted key path, all problems at once, in the file's order. ${VAR} and
// ${VAR:default} in scalar values are replaced from the environment first;
// then {{ expression }} over the variables: section (arithmetic and a few
// Jinja filters: expr.go), as AIPerf does. Keys are snake_case; their
// camelCase spellings are accepted too. Range checks are left to
// plan.Profile.Check, which runs after the CLI flags are overlaid.
package config
