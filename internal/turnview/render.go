package turnview

import (
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"fmt"
	"html/template"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/aiperf-go/aiperf/internal/numfmt"
	"github.com/aiperf-go/aiperf/internal/termsafe"
)

//go:embed viewer.css
var css string

//go:embed viewer.js
var script string

//go:embed viewer.html.tmpl
var layout string

var tmpl = template.Must(template.New("turn-messages").Parse(layout))

// csp allows the page its own inline style and script, by their digests,
// and nothing else: no request of any kind, and no other script even if
// a text escaped the escaping.
var csp = fmt.Sprintf("default-src 'none'; style-src 'sha256-%s'; script-src 'sha256-%s'; base-uri 'none'; form-action 'none'",
	digest(css), digest(script))

func digest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return base64.StdEncoding.EncodeToString(sum[:])
}

// WriteHTML writes the page.
func (v *View) WriteHTML(w io.Writer) error {
	if err := tmpl.Execute(w, v.page()); err != nil {
		return fmt.Errorf("render turn messages: %w", err)
	}
	return nil
}

// page is what the template shows: every text from the export already
// made safe to show (line), html/template escaping it for HTML.
type page struct {
	Source, Version, Stat, Bounds string
	Roles                         []RoleCount
	CSP                           string
	CSS                           template.CSS
	JS                            template.JS
	Convs                         []convView
	Hidden                        string // "2 more conversations", if any
	Limit                         int
}

type convView struct {
	ID, Disp, Kind, Parent, Replay, Lane, Models string
	TurnCount, Hidden                            string // "3 turns"; "2 more turns", if any
	MaxTurns                                     int
	Turns                                        []turnView
}

type turnView struct {
	Label, MaxTokens, Phase string
	Count                   string // "3 messages, 1 new"
	Cancelled, Failed       bool
	Items                   []item
}

// item is a message of a turn: its body where it first appears, else a
// link to there.
type item struct {
	ID               int
	First            bool
	Role, RoleClass  string
	Len, Body, Where string
	Cut              string // "12 more characters", if any
}

func (v *View) page() page {
	p := page{Source: line(v.Source), Version: line(v.Version), CSP: csp, CSS: template.CSS(css), JS: template.JS(script),
		Limit: v.Options.LimitConversations}
	if n := v.Conversations - len(v.Convs); n > 0 {
		p.Hidden = counted(n, "more conversation")
	}
	p.Stat = fmt.Sprintf("%s (%s shown) · %s · %s (%s unique) · from %s",
		counted(v.Conversations, "conversation"), count(len(v.Convs)), counted(v.Turns, "turn"),
		counted(v.MessageRefs, "message ref"), count(len(v.Msgs)), counted(v.Files, "raw file"))
	p.Bounds = fmt.Sprintf("At most %s conversations (-n), %s turns each (--max-turns), %s characters of each message (--content-cap).",
		count(v.Options.LimitConversations), count(v.Options.MaxTurns), count(v.Options.ContentCap))
	for _, r := range v.Roles {
		p.Roles = append(p.Roles, RoleCount{line(r.Role), r.Count})
	}
	first := make([]place, len(v.Msgs)) // where each message is shown
	for ci, c := range v.Convs {
		cv := convView{ID: line(c.ID), Disp: line(shortID(c.ID)), Kind: "root", Lane: line(c.Lane),
			Models: line(strings.Join(c.Models, ", ")), TurnCount: counted(c.TotalTurns, "turn"), MaxTurns: v.Options.MaxTurns}
		if c.HiddenTurns > 0 {
			cv.Hidden = counted(c.HiddenTurns, "more turn")
		}
		if c.Depth != 0 {
			cv.Kind = fmt.Sprintf("subagent (depth %d)", c.Depth)
		}
		if c.Parent != "" {
			cv.Parent = line(shortID(c.Parent))
		}
		if c.Replay > 0 {
			cv.Replay = fmt.Sprintf("replay %d", c.Replay+1)
		}
		for _, t := range c.Turns {
			cv.Turns = append(cv.Turns, v.turn(t, ci, first))
		}
		p.Convs = append(p.Convs, cv)
	}
	return p
}

// turn is a turn as shown; first records where each message is first
// shown (in the page's order), for the links of its repeats.
func (v *View) turn(t Turn, ci int, first []place) turnView {
	tv := turnView{Label: "turn ?", MaxTokens: line(t.MaxTokens), Cancelled: t.Cancelled, Failed: t.Failed}
	if t.HasIndex {
		tv.Label = fmt.Sprintf("turn %d", t.Index)
	}
	if t.Phase != "" && t.Phase != "profiling" {
		tv.Phase = line(t.Phase)
	}
	news := 0
	for mi, id := range t.Messages {
		m := v.Msgs[id]
		it := item{ID: id, Role: line(m.Role), RoleClass: roleClass(m.Role), Len: counted(m.Len, "character")}
		if !first[id].shown {
			it.First, it.Body = true, termsafe.Lines(m.Body)
			if m.Cut > 0 {
				it.Cut = counted(m.Cut, "more character")
			}
			first[id] = place{shown: true, conv: ci, pos: mi + 1, turn: tv.Label}
			news++
		} else {
			it.Where = first[id].where(ci, v.Convs)
		}
		tv.Items = append(tv.Items, it)
	}
	tv.Count = fmt.Sprintf("%s, %s new", counted(len(t.Messages), "message"), count(news))
	return tv
}

// place is where a message is first shown.
type place struct {
	shown     bool
	conv, pos int // its conversation (index), its position in the turn from 1
	turn      string
}

// where names the place for a repeat of the message in conversation ci:
// the turn and position, and the conversation when that is another.
func (p place) where(ci int, convs []Conversation) string {
	s := fmt.Sprintf("%s, message %d", p.turn, p.pos)
	if p.conv != ci {
		s = line(shortID(convs[p.conv].ID)) + ", " + s
	}
	return s
}

// roleClass is the style of a role: one of a fixed set.
func roleClass(role string) string {
	switch role {
	case "system", "developer", "user", "assistant", "tool":
		return role
	}
	return "other"
}

// shortID keeps the part of a conversation id that tells conversations
// apart, as AIPerf's viewer: ids of a split corpus share a long trace-id
// prefix (<trace>::sa:<id>), so only that prefix is cut.
func shortID(id string) string {
	if base, suffix, ok := strings.Cut(id, "::"); ok {
		return cutRunes(base, 10) + "::" + suffix
	}
	return cutRunes(id, 40)
}

func cutRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}

// line is a text of the export made safe to show on one line: control
// and bidirectional characters escaped, as the terminal shows them.
func line(s string) string { return termsafe.Text(s) }

func count(n int) string { return numfmt.Grouped(float64(n), 0) }

// counted is n things, the noun in the plural unless n is 1.
func counted(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return count(n) + " " + noun + "s"
}
