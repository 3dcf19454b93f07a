package main

import (
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/alecthomas/kong"
)

// The command tree as shell completion sees it, read from the kong model:
// each visible command's path, subcommands and flags (its own and those
// of the commands above it), with their enum values.

// compItem is a subcommand or a flag name, with its one-line help.
type compItem struct{ name, help string }

// compFlag is a visible flag of a command.
type compFlag struct {
	names []string // --name, its aliases, --no-name when negatable; -x
	help  string
	value bool     // takes a value (the next argument, or after '=')
	enum  []string // its choices ("" left out)
}

// compNode is a command (the root's path is "").
type compNode struct {
	path  string
	cmds  []compItem        // visible subcommands
	subs  map[string]string // a subcommand's name or alias → its path
	flags []compFlag
}

// completionTree walks app's visible commands, depth first. The hidden
// install-completion command is walked too, reached by the root's
// --install-completion (run() makes the flag that command).
func completionTree(app *kong.Application) []*compNode {
	var out []*compNode
	var walk func(n *kong.Node, path string, inherited []compFlag)
	walk = func(n *kong.Node, path string, inherited []compFlag) {
		flags := append(append([]compFlag(nil), inherited...), nodeFlags(n)...)
		cn := &compNode{path: path, flags: flags, subs: map[string]string{}}
		out = append(out, cn)
		// --install-completion is the root's alone: a command refuses it
		inherited = slices.DeleteFunc(slices.Clone(flags), func(f compFlag) bool {
			return slices.Contains(f.names, installCompletion)
		})
		for _, c := range n.Children {
			sub := strings.TrimSpace(path + " " + c.Name)
			switch {
			case c.Type != kong.CommandNode:
				continue
			case c.Hidden && c.Name == "install-completion" && path == "":
				cn.subs[installCompletion] = sub
			case c.Hidden:
				continue
			default:
				cn.cmds = append(cn.cmds, compItem{c.Name, oneLine(c.Help)})
				for _, name := range append([]string{c.Name}, c.Aliases...) {
					cn.subs[name] = sub
				}
			}
			walk(c, sub, inherited)
		}
	}
	walk(app.Node, "", nil)
	return out
}

// installCompletion is the root's flag that stands for a command.
const installCompletion = "--install-completion"

// nodeFlags are n's own visible flags.
func nodeFlags(n *kong.Node) []compFlag {
	var out []compFlag
	for _, f := range n.Flags {
		if f.Hidden {
			continue
		}
		cf := compFlag{help: oneLine(f.Help), value: !f.IsBool() && !f.IsCounter()}
		cf.names = append(cf.names, "--"+f.Name)
		for _, a := range f.Aliases {
			cf.names = append(cf.names, "--"+a)
		}
		if neg := negatedName(f); neg != "" {
			cf.names = append(cf.names, neg)
		}
		if f.Short != 0 {
			cf.names = append(cf.names, "-"+string(f.Short))
		}
		if f.Enum != "" {
			for _, e := range f.EnumSlice() {
				if e = strings.TrimSpace(e); e != "" {
					cf.enum = append(cf.enum, e)
				}
			}
		}
		out = append(out, cf)
	}
	return out
}

// negatedName is a negatable bool flag's negative form, as kong names it.
func negatedName(f *kong.Flag) string {
	switch neg := f.Tag.Negatable; neg {
	case "":
		return ""
	case "_": // kong's placeholder for --no-<name>
		return "--no-" + f.Name
	default:
		return "--" + neg
	}
}

// longNames are the flag's names that start with "--".
func (f compFlag) longNames() []string {
	var out []string
	for _, n := range f.names {
		if strings.HasPrefix(n, "--") {
			out = append(out, n)
		}
	}
	return out
}

// valueFlags are the names of node's flags that take a value.
func (n *compNode) valueFlags() []string {
	var out []string
	for _, f := range n.flags {
		if f.value {
			out = append(out, f.names...)
		}
	}
	return out
}

// oneLine is a help text's first sentence, on one line, at most 80
// characters.
func oneLine(help string) string {
	s := strings.Join(strings.Fields(help), " ")
	for i := 0; i+1 < len(s); i++ { // the first ". " that ends a sentence (not "e.g. ")
		if s[i] == '.' && s[i+1] == ' ' && !strings.HasSuffix(s[:i], "e.g") && !strings.HasSuffix(s[:i], "i.e") {
			s = s[:i]
			break
		}
	}
	s = strings.TrimSuffix(s, ".")
	if utf8.RuneCountInString(s) > 80 {
		r := []rune(s)
		s = strings.TrimSpace(string(r[:79])) + "…"
	}
	return s
}
