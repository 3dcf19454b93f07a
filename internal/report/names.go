package report

import (
	"slices"
	"strings"

	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/servermetrics"
)

// Names are a run's export file names: AIPerf's defaults, or every file
// based on --profile-export-prefix P (P.json, P.csv, P.jsonl,
// P_server_metrics.json, ...).
type Names struct {
	JSON, CSV, JSONL                   string
	ServerJSON, ServerCSV, ServerJSONL string
	ServerParquet                      string
	GPUJSONL                           string
	TimeslicesJSON, TimeslicesCSV      string
	RawJSONL                           string // written under --export-level raw only
	NetworkJSONL                       string // the probes of --network-latency-automatic
	Outputs                            string // outputs.json, written under --export-outputs-json only
	outputs                            bool   // --export-outputs-json (or raw): outputs.json is written
	records                            bool   // --export-level records: the JSONL is written
	raw                                bool   // --export-level raw: the raw JSONL is written
	csv                                bool   // the CSV summary is written (artifacts.summary lists it, or is absent)
}

// prefixSuffixes are stripped from a prefix, the longest first, so that
// "foo.json" or "foo_raw.jsonl" name the same exports as "foo" (as AIPerf).
var prefixSuffixes = []string{"_network_latency.jsonl", "_server_metrics.parquet", "_server_metrics.jsonl", "_server_metrics.json",
	"_server_metrics.csv", "_gpu_telemetry.jsonl", "_timeslices.csv", "_timeslices.json", "_raw.jsonl", "_outputs.json",
	".parquet", ".jsonl", ".json", ".csv"}

// NamesOf are the export names p asks for.
func NamesOf(p plan.Profile) Names {
	n := Names{JSON: JSONFile, CSV: CSVFile, JSONL: JSONLFile, ServerJSON: servermetrics.FileJSON,
		ServerCSV: servermetrics.FileCSV, ServerJSONL: servermetrics.FileJSONL, ServerParquet: servermetrics.FileParquet, GPUJSONL: servermetrics.FileGPUJSONL,
		TimeslicesJSON: TimeslicesJSONFile, TimeslicesCSV: TimeslicesCSVFile, RawJSONL: RawJSONLFile,
		NetworkJSONL: NetworkJSONLFile, raw: p.ExportLevel == plan.ExportRaw,
		Outputs: OutputsFile, outputs: p.WritesOutputs(),
		csv:     len(p.SummaryFormats) == 0 || slices.Contains(p.SummaryFormats, "csv"),
		records: p.ExportLevel != plan.ExportSummary}
	if base := p.ProfileExportPrefix; base != "" {
		for _, s := range prefixSuffixes {
			if strings.HasSuffix(base, s) {
				base = strings.TrimSuffix(base, s)
				break
			}
		}
		n.JSON, n.CSV, n.JSONL = base+".json", base+".csv", base+".jsonl"
		n.ServerJSON, n.ServerCSV = base+"_server_metrics.json", base+"_server_metrics.csv"
		n.ServerJSONL, n.GPUJSONL = base+"_server_metrics.jsonl", base+"_gpu_telemetry.jsonl"
		n.ServerParquet = base + "_server_metrics.parquet"
		n.TimeslicesJSON, n.TimeslicesCSV = base+"_timeslices.json", base+"_timeslices.csv"
		n.RawJSONL, n.NetworkJSONL, n.Outputs = base+"_raw.jsonl", base+"_network_latency.jsonl", base+"_outputs.json"
	}
	return n
}

// Records reports whether the per-request JSONL is written (--export-level
// records, the default; not summary).
func (n Names) Records() bool { return n.records }
