package dataset

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
)

// AIPerf's orchestrator conversations of a dag_jsonl file: a line with
// "orchestrator": true sends no request of its own and drives rounds of
// fan-out. Each round is a turn that sends nothing (Turn.NoRequest) and
// spawns its branches, which the next round joins; that round is due its
// think time after they ended; a last such turn joins the last round. So
// "rounds": N fires the conversation-level "spawns" N times, a list of
// {"spawns", "think_time_ms"} fires each round's own, and an orchestrator
// without rounds is one round of its spawns. think_time_sigma draws each
// round's think time per session from a lognormal whose median is its
// think_time_ms, clamped by think_time_min_ms and think_time_max_ms.

// dagRound is one round of an orchestrator: the children it spawns (their
// fields, for errors) and the think time before it fires.
type dagRound struct {
	spawns  []json.RawMessage
	field   string
	thinkMs float64
}

// orchestrator reads an orchestrator conversation's fan-out into silent
// turns and their spawns.
func (c *dagConv) orchestrator(top map[string]json.RawMessage) []problem {
	var ps []problem
	if v := top["orchestrator"]; string(v) != "true" {
		ps = append(ps, problemf("orchestrator", "expected true (an orchestrator conversation) or false, got %s", dagGot(v)))
	}
	if truthy(top["turns"]) {
		ps = append(ps, problemf("turns", "an orchestrator sends no request of its own: leave turns out, and give the "+
			"conversations it starts in spawns (or rounds)"))
	}
	if isSet(top["pre_session_spawns"]) {
		ps = append(ps, problemf("pre_session_spawns", "an orchestrator starts its conversations in spawns (or rounds): "+
			"move them there"))
	}
	ps = append(ps, c.contextMode(top["context_mode"])...)
	think, draw, p := dagThink(top)
	ps = append(ps, p...)
	rounds, p := dagRounds(top, think)
	if ps = append(ps, p...); ps != nil {
		return ps
	}
	c.Think = draw
	c.Turns = make([]Turn, len(rounds)+1)
	for k, r := range rounds {
		c.Turns[k] = Turn{NoRequest: true, DelayMs: r.thinkMs}
		seen := map[string]bool{}
		for j, e := range r.spawns {
			f := fmt.Sprintf("%s[%d]", r.field, j)
			id, p := dagID(f, e)
			ps = append(ps, p...)
			ps = append(ps, c.spawn(seen, f, id, k, k+1, p == nil)...)
		}
	}
	c.Turns[len(rounds)] = Turn{NoRequest: true}
	return ps
}

// dagRounds reads an orchestrator's rounds: rounds N of its spawns, a
// list of rounds of their own, or (no rounds) one round of its spawns;
// think is the conversation's think_time_ms.
func dagRounds(top map[string]json.RawMessage, think float64) ([]dagRound, []problem) {
	spawns, ps := dagList("spawns", top["spawns"], "session ids")
	raw := top["rounds"]
	if jsonKindOf(raw) == "a list" {
		if isSet(top["spawns"]) {
			return nil, []problem{problemf("spawns", "a list of rounds names each round's spawns: leave the "+
				"conversation's spawns out")}
		}
		list, p := dagList("rounds", raw, "round objects")
		if p == nil && len(list) == 0 {
			p = []problem{problemf("rounds", "expected at least one round")}
		}
		if len(list) > dagMaxTree {
			return nil, []problem{problemf("rounds", "more than %d rounds: fewer rounds", dagMaxTree)}
		}
		rounds := make([]dagRound, 0, len(list))
		for k, e := range list {
			r, rp := dagRoundObject(fmt.Sprintf("rounds[%d]", k), e, think)
			rounds, p = append(rounds, r), append(p, rp...)
		}
		return rounds, append(ps, p...)
	}
	n := int64(1)
	if isSet(raw) {
		v, ok := dagInt(raw)
		if !ok || v < 1 || v > int64(dagMaxTree) {
			return nil, append(ps, problemf("rounds", "expected a number of rounds (an integer from 1 to %d) or a list "+
				"of rounds, got %s", dagMaxTree, dagGot(raw)))
		}
		n = v
	}
	if ps == nil && len(spawns) == 0 {
		return nil, []problem{problemf("spawns", "an orchestrator needs the conversations it starts: a non-empty list "+
			"of session ids")}
	}
	if n*int64(len(spawns)) > int64(dagMaxTree) { // before the rounds are built
		return nil, append(ps, problemf("rounds", "%d rounds of %d conversations start more than %d sessions: "+
			"fewer rounds", n, len(spawns), dagMaxTree))
	}
	rounds := make([]dagRound, n)
	for k := range rounds {
		rounds[k] = dagRound{spawns: spawns, field: "spawns", thinkMs: think}
	}
	return rounds, ps
}

// dagRoundObject reads one round of a list: {"spawns", "think_time_ms"}.
func dagRoundObject(f string, raw json.RawMessage, think float64) (dagRound, []problem) {
	var m map[string]json.RawMessage
	if jsonKindOf(raw) != "an object" || json.Unmarshal(raw, &m) != nil {
		return dagRound{}, []problem{problemf(f, `expected a round object {"spawns": […], "think_time_ms": …}, got %s`,
			jsonKindOf(raw))}
	}
	ps := dagUnknownKeys(f, m, []string{"spawns", "think_time_ms"}, "a round has spawns and think_time_ms")
	spawns, p := dagList(f+".spawns", m["spawns"], "session ids")
	if ps = append(ps, p...); p == nil && len(spawns) == 0 {
		ps = append(ps, problemf(f+".spawns", "expected a non-empty list of session ids"))
	}
	r := dagRound{spawns: spawns, field: f + ".spawns", thinkMs: think}
	if v := m["think_time_ms"]; isSet(v) {
		ms, p := dagMs(f+".think_time_ms", v)
		r.thinkMs, ps = ms, append(ps, p...)
	}
	return r, ps
}

// dagMaxSigma bounds think_time_sigma, as AIPerf does: e^(10·Z) already
// spans a factor of 10^17 at Z = 4.
const dagMaxSigma = 10

// dagThink checks an orchestrator's think-time fields (AIPerf's rules) and
// returns its think_time_ms (0 when not given) and, with
// think_time_sigma, the distribution of its rounds' think times.
func dagThink(top map[string]json.RawMessage) (float64, *ThinkTime, []problem) {
	var ps []problem
	vals := map[string]float64{}
	for _, k := range []string{"think_time_ms", "think_time_sigma", "think_time_min_ms", "think_time_max_ms"} {
		if raw := top[k]; isSet(raw) {
			read := dagMs
			if k == "think_time_sigma" { // not milliseconds: bounded below
				read = dagNumber
			}
			v, p := read(k, raw)
			vals[k], ps = v, append(ps, p...)
		}
	}
	if sigma, ok := vals["think_time_sigma"]; ok && sigma < 0 {
		ps = append(ps, problemf("think_time_sigma", "expected a number from 0 to %d, got %g", dagMaxSigma, sigma))
	}
	_, ms := vals["think_time_ms"]
	sigma, hasSigma := vals["think_time_sigma"]
	lo, hasLo := vals["think_time_min_ms"]
	hi, hasHi := vals["think_time_max_ms"]
	clamp := "think_time_min_ms"
	if !hasLo {
		clamp = "think_time_max_ms"
	}
	switch {
	case len(vals) > 0 && !isSet(top["rounds"]):
		ps = append(ps, problemf(slices.Sorted(maps.Keys(vals))[0], "think times pace rounds: give rounds too"))
	case hasSigma && !ms:
		ps = append(ps, problemf("think_time_sigma", "draws around think_time_ms (its median): give think_time_ms"))
	case hasSigma && sigma > dagMaxSigma:
		ps = append(ps, problemf("think_time_sigma", "expected at most %d, got %g", dagMaxSigma, sigma))
	case (hasLo || hasHi) && !hasSigma:
		ps = append(ps, problemf(clamp, "think_time_min_ms and think_time_max_ms clamp the draws of "+
			"think_time_sigma: give think_time_sigma"))
	case hasLo && hasHi && lo > hi:
		ps = append(ps, problemf("think_time_min_ms", "must be at most think_time_max_ms (%g), got %g", hi, lo))
	}
	if !hasSigma || ps != nil {
		return vals["think_time_ms"], nil, ps
	}
	return vals["think_time_ms"], &ThinkTime{Sigma: sigma, MinMs: lo, MaxMs: hi}, nil
}

// dagNumber decodes a JSON number.
func dagNumber(f string, raw json.RawMessage) (float64, []problem) {
	var v float64
	if jsonKindOf(raw) != "a number" || json.Unmarshal(raw, &v) != nil {
		return 0, []problem{problemf(f, "expected a number ≥ 0, got %s", dagGot(raw))}
	}
	return v, nil
}

// dagMs decodes a think time: a number of milliseconds from 0 to a day.
func dagMs(f string, raw json.RawMessage) (float64, []problem) {
	v, ps := dagNumber(f, raw)
	if ps != nil {
		return 0, ps
	}
	return v, checkDelay(f, &v)
}
