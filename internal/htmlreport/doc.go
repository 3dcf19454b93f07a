// Package htmlreport writes `aiperf report`: one self-contained HTML file
// that opens anywhere, offline. It holds each search's section first (what
// it found and spent, its trajectory figure, its probes with their verdicts
// and its bracket; Options.Searches), then the compared sweeps' (or runs')
// configurations and their differences, the sweep tables with the Pareto
// cells marked, the compare verdicts, the figures of package plot as inline
// SVG (the sweep-level views, and each cell's CDFs and timelines), the
// control-hook calls, and every run's audit warnings and KV-cache reset
// verdict. Styles and the small script (sorting tables, showing and hiding
// a figure's series) are inline too: the file makes no request of any kind.
package htmlreport
