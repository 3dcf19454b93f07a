// Package plan holds the domain types every other package speaks: a Profile
// (one benchmark cell, everything `aiperf profile` needs), its Phases, and a
// Sweep expanded into Cells and Trials.
//
// A Profile carries kong tags so that the CLI, the YAML loader, the Starlark
// builtins and the sweep runner share one declaration per option: the JSON name
// of a field is the snake_case of its flag, and its kong `default` tag is the
// only place a default lives (NewProfile applies them).
package plan
