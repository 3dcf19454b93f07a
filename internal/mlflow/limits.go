package mlflow

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// MLflow's limits on what a run holds, in characters (mlflow/utils/
// validation.py: MAX_PARAM_VAL_LENGTH, MAX_TAG_VAL_LENGTH,
// MAX_ENTITY_KEY_LENGTH), and on a run's name (the 250-character column of
// its runs table). A value over its limit fails the whole request it is in,
// so each is clipped before it is sent, and says so.
const (
	maxParamValue = 6000
	maxTagValue   = 8000
	maxKey        = 250
	maxRunName    = 250
)

// clipMark ends a clipped value; clipKeyMark a clipped key (a key may hold
// only letters, digits, _ - . / and spaces).
const (
	clipMark    = "…(clipped)"
	clipKeyMark = "...clipped"
)

// clip returns s cut to at most n characters (code points, as MLflow counts
// them), ending in mark when it was cut.
func clip(s string, n int, mark string) (string, bool) {
	if utf8.RuneCountInString(s) <= n {
		return s, false
	}
	i := 0
	for range n - utf8.RuneCountInString(mark) {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return s[:i] + mark, true
}

// clipped is a key or value sent clipped, for the warning.
type clipped struct {
	what, key   string // "param", "tag" or "run name"; the key as sent
	n, limit    int    // its length in characters, MLflow's limit
	keyTooLong  bool
	keyOriginal int // the key's length, when it was the key that was cut
}

// clipKVs clips the keys and values of kvs (params or tags: what) to MLflow's
// limits, in place, and lists what it clipped.
func clipKVs(kvs []KV, what string, limit int) []clipped {
	var out []clipped
	for i := range kvs {
		if k, cut := clip(kvs[i].Key, maxKey, clipKeyMark); cut {
			out = append(out, clipped{what: what, key: k, keyTooLong: true, keyOriginal: utf8.RuneCountInString(kvs[i].Key), limit: maxKey})
			kvs[i].Key = k
		}
		if v, cut := clip(kvs[i].Value, limit, clipMark); cut {
			out = append(out, clipped{what: what, key: kvs[i].Key, n: utf8.RuneCountInString(kvs[i].Value), limit: limit})
			kvs[i].Value = v
		}
	}
	return out
}

// warnClipped is one warning naming what was clipped (at most a few, each
// key shortened: never a whole value).
func (r *Run) warnClipped(cs []clipped) {
	cs = slices.DeleteFunc(cs, func(c clipped) bool { // a tag clipped at the creation is not warned of again
		seen := r.clipWarned[c.what+" "+c.key]
		if r.clipWarned == nil {
			r.clipWarned = map[string]bool{}
		}
		r.clipWarned[c.what+" "+c.key] = true
		return seen
	})
	if len(cs) == 0 {
		return
	}
	parts := make([]string, 0, min(len(cs), 4))
	for _, c := range cs[:min(len(cs), 4)] {
		if c.keyTooLong {
			parts = append(parts, fmt.Sprintf("a %s key of %d characters (limit %d)", c.what, c.keyOriginal, c.limit))
			continue
		}
		parts = append(parts, fmt.Sprintf("%s %q (%d characters, limit %d)", c.what, Preview(c.key, 60), c.n, c.limit))
	}
	if len(cs) > 4 {
		parts = append(parts, fmt.Sprintf("and %d more", len(cs)-4))
	}
	r.o.Warn(fmt.Sprintf("mlflow run %s: over MLflow's length limits, sent clipped (ending %q): %s",
		r.Info.RunID, clipMark, strings.Join(parts, ", ")))
}

// Preview is s cut to n characters for a message ("…" marks the cut).
func Preview(s string, n int) string {
	p, _ := clip(s, n, "…")
	return p
}
