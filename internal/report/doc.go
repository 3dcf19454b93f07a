// Package report renders a finished run (result.Run) for people and tools:
// the console summary (Console) and AIPerf's three export files —
// profile_export_aiperf.json (WriteJSON), profile_export_aiperf.csv
// (WriteCSV) and profile_export.jsonl (WriteJSONL) — which WriteAll puts in
// an artifact directory. It only formats data it is given; it never measures
// or queries anything.
package report
