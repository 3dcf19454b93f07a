package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/aiperf-go/aiperf/internal/config"
	"github.com/aiperf-go/aiperf/internal/inputfile"
	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/report"
	"github.com/aiperf-go/aiperf/internal/starter"
)

// ConfigInitCmd is `aiperf config init`, with AIPerf's flags.
type ConfigInitCmd struct {
	Template string   `name:"template" short:"t" default:"minimal" placeholder:"NAME" help:"The template to write (default ${default}; --list shows them)."`
	List     bool     `name:"list" short:"l" negatable:"" help:"List the templates by category and exit."`
	Search   string   `name:"search" short:"s" placeholder:"KEYWORD" help:"List the templates whose name, title, description, tags or features hold KEYWORD."`
	Category string   `name:"category" short:"c" placeholder:"NAME" help:"List only this category's templates."`
	Verbose  bool     `name:"verbose" short:"v" negatable:"" help:"With a list: show tags and difficulty too."`
	Model    string   `name:"model" short:"m" placeholder:"NAME" help:"Put this model name in the file."`
	URL      []string `name:"url" short:"u" sep:"none" placeholder:"URL" help:"Put this endpoint URL in the file (one: list more servers under benchmark.endpoint.urls in it)."`
	Output   string   `name:"output" short:"o" placeholder:"FILE" help:"Write the file here instead of printing it (an existing file is never overwritten)."`
}

// Run lists templates, or writes one.
func (c *ConfigInitCmd) Run(g *Globals) error {
	if c.List || c.Search != "" || c.Category != "" {
		return c.list(g)
	}
	t, err := starter.Get(c.Template)
	if err != nil {
		return usageErr(err)
	}
	if len(c.URL) > 1 {
		return usageErr(fmt.Errorf("--url given %d times: config init writes one url; list the servers under "+
			"benchmark.endpoint.urls in the file it writes, one item each; nothing was written", len(c.URL)))
	}
	url := strings.Join(c.URL, "")
	if err := checkInitURL(url); err != nil {
		return usageErr(err)
	}
	text, err := t.With(c.Model, url)
	if err != nil {
		return err
	}
	if c.Output == "" {
		_, err := fmt.Fprint(g.Stdout, text)
		return err
	}
	text = starter.Named(text, c.Output) // "aiperf profile --config this.yaml" names the file
	if err := writeNew(c.Output, []byte(text), "the config file"); err != nil {
		return err
	}
	fmt.Fprintf(g.Stderr, "wrote %s (template %s); run it with: aiperf profile --config %s\n", c.Output, t.Name, c.Output)
	return nil
}

// checkInitURL refuses a --url that config validate would refuse in the
// file written, by the check a profile's URLs get (plan.CheckURL). A
// ${VAR} or {{ }} in it is resolved when the file is read, and checked
// then.
func checkInitURL(raw string) error {
	if raw == "" || strings.Contains(raw, "${") || strings.Contains(raw, "{{") {
		return nil
	}
	err := plan.CheckURL(raw)
	switch {
	case err == nil:
		return nil
	case strings.Contains(raw, ","):
		return fmt.Errorf("--url is not a URL: %q: config init writes one url; list the servers under "+
			"benchmark.endpoint.urls in the file it writes, one item each; nothing was written", plan.RedactURL(raw))
	}
	// %v: a profile's field errors print under "invalid configuration
	// (nothing was sent)", which is not what happened here.
	return fmt.Errorf("%v: config validate would refuse the file, so nothing was written", err)
}

// list prints the templates that match, grouped by category.
func (c *ConfigInitCmd) list(g *Globals) error {
	if c.Category != "" && !containsFold(starter.Categories, c.Category) {
		return usageErr(fmt.Errorf("--category %q: the categories are %s", c.Category, strings.Join(starter.Categories, ", ")))
	}
	var rows [][]string
	for _, t := range starter.List() {
		if c.Category != "" && !strings.EqualFold(t.Category, c.Category) || c.Search != "" && !t.Matches(c.Search) {
			continue
		}
		row := []string{t.Category, t.Name, t.Description}
		if c.Verbose {
			row = append(row, strings.Join(t.Tags, ", "), t.Difficulty)
		}
		rows = append(rows, row)
	}
	if len(rows) == 0 {
		fmt.Fprintln(g.Stdout, "no template matches")
		return nil
	}
	head, align := []string{"category", "template", "description"}, "lll"
	if c.Verbose {
		head, align = append(head, "tags", "difficulty"), "lllll"
	}
	report.Table(g.Stdout, head, rows, align)
	fmt.Fprintln(g.Stdout, "aiperf config init --template NAME [-o FILE] writes one.")
	return nil
}

func containsFold(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}

// ConfigMigrateCmd is `aiperf config migrate FILE`: AIPerf's
// tools/migrate_config_yaml.py as a command.
type ConfigMigrateCmd struct {
	configFile `embed:""`
	Output     string `name:"output" short:"o" placeholder:"FILE" help:"Write the migrated file here (an existing file is never overwritten); default: print it."`
	InPlace    bool   `name:"in-place" help:"Rewrite the file itself, keeping the original as FILE.bak (FILE.bak.1, ... when that exists: an existing file is never overwritten)."`
}

// Run rewrites the file in schema 2.0.
func (c *ConfigMigrateCmd) Run(g *Globals) error {
	path, err := c.path("migrate")
	if err != nil {
		return err
	}
	if c.InPlace && c.Output != "" {
		return usageErr(errors.New("give --in-place or --output, not both"))
	}
	data, err := inputfile.ReadFileMax(path, config.MaxFileBytes) // a huge file is refused unread
	if tl := (*inputfile.TooLargeError)(nil); errors.As(err, &tl) {
		return usageErr(fmt.Errorf("read the config file: %w, the most a config file may be", err))
	}
	if err != nil {
		return fmt.Errorf("read the config file: %w", err)
	}
	out, schema, changed, err := config.Migrate(path, data)
	if err != nil {
		return usageErr(err)
	}
	fmt.Fprintf(g.Stderr, "%s was in %s\n", path, schema)
	switch {
	case c.InPlace && !changed:
		fmt.Fprintf(g.Stderr, "%s is already in the current shape: left as it is\n", path)
		return nil
	case c.InPlace:
		return rewriteInPlace(g, path, data, out)
	case c.Output != "":
		return writeNew(c.Output, out, "the migrated file")
	}
	_, err = g.Stdout.Write(out)
	return err
}

// maxBackups bounds the names keepOriginal tries: FILE.bak, FILE.bak.1, ...
const maxBackups = 100

// rewriteInPlace replaces the file at path (whose content is data) with out,
// first keeping data in a new backup file (see keepOriginal).
func rewriteInPlace(g *Globals, path string, data, out []byte) error {
	bak, err := keepOriginal(path, data)
	if err != nil {
		return err
	}
	if bak != path+".bak" {
		fmt.Fprintf(g.Stderr, "%s.bak exists: it is left as it is\n", path)
	}
	if err := os.WriteFile(path, out, 0o644); err != nil {
		return fmt.Errorf("rewrite the config file (the original is %s): %w", bak, err)
	}
	fmt.Fprintf(g.Stderr, "rewrote %s in schema 2.0 (the original is %s)\n", path, bak)
	return nil
}

// keepOriginal writes data, the content of the file at path, to the first
// free name of path.bak, path.bak.1, ... path.bak.99 and returns it. It
// never overwrites a file nor writes through a symlink (each name is
// created exclusively), and keeps the original's permissions.
func keepOriginal(path string, data []byte) (string, error) {
	perm := fs.FileMode(0o644)
	if fi, err := os.Stat(path); err == nil {
		perm = fi.Mode().Perm()
	}
	for i := range maxBackups {
		bak := path + ".bak"
		if i > 0 {
			bak = fmt.Sprintf("%s.bak.%d", path, i)
		}
		err := createNew(bak, data, perm)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("keep the original as %s (%s is left as it is): %w", bak, path, err)
		}
		return bak, nil
	}
	return "", usageErr(fmt.Errorf("%s.bak and %s.bak.1 to .bak.%d all exist: %s is left as it is; "+
		"remove old backups or give --output instead of --in-place", path, path, maxBackups-1, path))
}

// createNew writes data to a new file at path with perm; an existing file
// (a symlink too) gives an error wrapping fs.ErrExist. A partly written
// file is removed.
func createNew(path string, data []byte, perm fs.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(path)
	}
	return err
}

// writeNew writes data to a new file at path, refusing (a usage error) to
// overwrite one, or to write where path cannot be created: a directory
// that does not exist (it is not made), a file where a directory should
// be, a directory not writable. what names the file in errors.
func writeNew(path string, data []byte, what string) error {
	err := createNew(path, data, 0o644)
	var pe *fs.PathError
	switch {
	case err == nil:
		return nil
	case errors.Is(err, fs.ErrExist):
		return usageErr(fmt.Errorf("%s exists: it is left as it is; remove it or give another --output", path))
	case errors.Is(err, fs.ErrNotExist):
		return usageErr(fmt.Errorf("write %s: the directory %s does not exist: make it first, or give another --output",
			what, filepath.Dir(path)))
	case errors.Is(err, syscall.ENOTDIR):
		return usageErr(fmt.Errorf("write %s: %s: a part of its directory is a file, not a directory: give another --output",
			what, path))
	case errors.Is(err, fs.ErrPermission) && errors.As(err, &pe) && pe.Op == "open":
		return usageErr(fmt.Errorf("write %s: %s cannot be created (%v): give another --output", what, path, pe.Err))
	}
	return fmt.Errorf("write %s: %w", what, err)
}
