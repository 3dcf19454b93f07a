package main

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/alecthomas/kong"
)

// The named mappers of the profile's list flags (the `type` tag of their
// fields in plan.Profile).
const (
	// listType is a repeatable list flag that also takes AIPerf's
	// space-separated values: --server-metrics A B is --server-metrics A
	// --server-metrics B.
	listType = "list"
	// optionalListType is a listType flag that may also be given bare, with
	// no value (AIPerf's bare --gpu-telemetry).
	optionalListType = "optionallist"
)

// consumeMultiple are the flags AIPerf declares consume_multiple (its
// config/flags/cli_config.py): each occurrence takes every value that
// follows up to the next flag. Those of them this client has (a list of
// strings) read so on every command that takes no positional argument;
// the ones tagged listType or optionalListType already do.
var consumeMultiple = []string{"url", "extra-inputs", "header", "dataset-filter", "stream", "otel-resource-attributes",
	"mlflow-tag", "mlflow-artifact-glob", "wandb-tag", "server-metrics", "server-metrics-formats", "gpu-telemetry"}

// parserOptions are the kong options every parse of the command tree uses:
// the list flags' mappers.
func parserOptions() []kong.Option {
	return []kong.Option{
		kong.NamedMapper(listType, listMapper{}),
		kong.NamedMapper(optionalListType, listMapper{bare: true}),
		kong.PostBuild(consumeMultipleFlags),
	}
}

// consumeMultipleFlags gives the consumeMultiple flags the list mapper on
// every leaf command without positional arguments (on a command with one,
// such as aiperf sweep SCRIPT, a value list would swallow it: there they
// stay repeatable only). A flag with a sep: tag keeps splitting each value
// on it (--stream metrics,timing).
func consumeMultipleFlags(k *kong.Kong) error {
	return kong.Visit(k.Model, func(n kong.Visitable, next kong.Next) error {
		node, ok := n.(*kong.Node)
		if !ok || len(node.Children) > 0 || len(node.Positional) > 0 {
			return next(nil)
		}
		for _, f := range node.Flags {
			t := f.Target.Type()
			if !slices.Contains(consumeMultiple, f.Name) || t.Kind() != reflect.Slice || t.Elem().Kind() != reflect.String {
				continue
			}
			if _, done := f.Value.Mapper.(listMapper); done {
				continue
			}
			f.Value.Mapper = listMapper{split: f.Tag.Has("sep") && f.Tag.Sep != -1}
		}
		return next(nil)
	})
}

// listMapper decodes one occurrence of a list flag into a []string it
// appends to: an inline value (--url=A, -uA) is one value; otherwise every
// following argument that is a value, up to the next flag or the end. A
// following flag (or anything starting with "-") is never taken as a
// value, and arguments after "--" are not either.
type listMapper struct {
	bare  bool // the flag may be given with no value at all
	split bool // each value is also split on the flag's sep: tag
}

// Decode implements kong.Mapper.
func (m listMapper) Decode(ctx *kong.DecodeContext, target reflect.Value) error {
	if target.Kind() != reflect.Slice || target.Type().Elem().Kind() != reflect.String {
		return fmt.Errorf("a list flag must be a list of strings, not %s", target.Type())
	}
	var values []string
	if t := ctx.Scan.Peek(); t.Type == kong.FlagValueToken || t.Type == kong.ShortFlagTailToken {
		ctx.Scan.Pop()
		values = append(values, fmt.Sprint(t.Value))
	} else {
		for isListValue(ctx.Scan.Peek()) {
			values = append(values, fmt.Sprint(ctx.Scan.Pop().Value))
		}
	}
	if len(values) == 0 && !m.bare {
		return fmt.Errorf("expected a value (one or more, space-separated, or the flag repeated), got %s", next(ctx.Scan.Peek()))
	}
	if m.split && ctx.Value != nil && ctx.Value.Tag != nil {
		var parts []string
		for _, v := range values {
			parts = append(parts, strings.Split(v, string(ctx.Value.Tag.Sep))...)
		}
		values = parts
	}
	for _, v := range values {
		target.Set(reflect.Append(target, reflect.ValueOf(v).Convert(target.Type().Elem())))
	}
	return nil
}

// isListValue reports whether t is a plain argument a list flag takes: not
// a flag, not past "--" (those are typed positional), not the end.
func isListValue(t kong.Token) bool {
	s, ok := t.Value.(string)
	return ok && t.Type == kong.UntypedToken && s != "" && !strings.HasPrefix(s, "-")
}

// next names the token a list flag stopped at, for its error.
func next(t kong.Token) string {
	if t.IsEOL() {
		return "the end of the command line"
	}
	return fmt.Sprintf("%q", t.String())
}
