package plan

import (
	"fmt"
	"sort"
	"strings"
)

// Suggest proposes the candidates closest to a misspelt name, for "unknown
// option" and "unknown key" messages: ` (did you mean "a"?)`, or up to three
// as ` (did you mean "a", "b" or "c"?)`. A candidate qualifies when its edit
// distance to name is at most 1 + len(name)/4, or when it contains a name of
// four or more letters. It returns "" when none qualifies.
func Suggest(name string, candidates []string) string {
	type cand struct {
		name string
		dist int
	}
	var cands []cand
	seen := map[string]bool{}
	limit := 1 + len(name)/4
	for _, c := range candidates {
		if seen[c] {
			continue
		}
		seen[c] = true
		if d := editDistance(name, c); d <= limit || (len(name) >= 4 && strings.Contains(c, name)) {
			cands = append(cands, cand{c, d})
		}
	}
	if len(cands) == 0 {
		return ""
	}
	sort.Slice(cands, func(i, j int) bool {
		if cands[i].dist != cands[j].dist {
			return cands[i].dist < cands[j].dist
		}
		return cands[i].name < cands[j].name
	})
	quoted := make([]string, 0, 3)
	for _, c := range cands[:min(3, len(cands))] {
		quoted = append(quoted, fmt.Sprintf("%q", c.name))
	}
	if len(quoted) == 1 {
		return " (did you mean " + quoted[0] + "?)"
	}
	return " (did you mean " + strings.Join(quoted[:len(quoted)-1], ", ") + " or " + quoted[len(quoted)-1] + "?)"
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
