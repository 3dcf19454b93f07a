package notbuilt

import (
	"strings"
	"testing"
)

// The embedded list reads whole: every line an entry with a status, a why
// and something to use instead, no name twice.
func TestListReads(t *testing.T) {
	entries, err := All()
	if err != nil {
		t.Fatal(err)
	}
	var options, commands int
	for _, e := range entries {
		if e.Option() {
			options++
		} else {
			commands++
		}
	}
	if options < 20 || commands < 3 {
		t.Fatalf("%d options and %d commands read from %s", options, commands, File)
	}
	e, ok := Lookup("--hf-subset")
	if !ok || e.Status != "n/a" || !strings.Contains(e.Instead, "--input-file") {
		t.Fatalf("--hf-subset = %+v, %v", e, ok)
	}
	want := "--hf-subset is an AIPerf option this client does not build: " + e.Why + "; instead, " + e.Instead
	if got := e.Refusal(); got != want {
		t.Errorf("Refusal() = %q, want %q", got, want)
	}
	if k, _ := Lookup("kube"); !strings.HasPrefix(k.Refusal(), "aiperf kube is an AIPerf command this client does not build: ") {
		t.Errorf("kube's refusal = %q", k.Refusal())
	}
	if _, ok := Lookup("--model"); ok {
		t.Error("--model is listed")
	}
}

// A malformed line is named with its line number, and the lines around it
// are still read.
func TestParseNamesBadLines(t *testing.T) {
	entries, err := parse(strings.Join([]string{
		"# comment",
		"--good\tn/a: why\tthat",
		"--no-instead\tn/a: why\t ",
		"--bad-status\tmaybe: why\tthat",
		"two fields\tn/a: why",
		"--good\tissue 3: again\tthat",
		"cmd\tnot built: why\tthat",
	}, "\n"))
	if len(entries) != 2 || entries[0].Name != "--good" || entries[0].Line != 2 || entries[1].Name != "cmd" || entries[1].Option() {
		t.Fatalf("entries = %+v", entries)
	}
	for _, want := range []string{":3: --no-instead: says nothing to use instead", `:4: --bad-status: the reason must read`,
		":5: want <name><TAB>", ":6: --good is listed again (first on line 2)"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v: want %q", err, want)
		}
	}
}
