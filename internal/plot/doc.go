// Package plot turns stored runs and sweeps into pictures: the Pareto view
// of a sweep (throughput against TTFT p99, a point per cell with confidence
// whiskers over its trials and the frontier drawn, several sweeps
// overlaid), the interactivity view (output tokens/s per user against total
// output tokens/s), per-metric bars with whiskers, TTFT and ITL CDFs and a
// per-run timeline (requests over time, in-flight count, phases shaded,
// control-hook calls marked), and a search's trajectory (each probe's
// statistic against the searched parameter with its verdict, interval and
// trials, the SLA line and the bracket; TrajectoryOf, from
// search_history.json).
//
// Every figure is two layers: its data, a plain value built from store rows
// or a search's history (Scatter, Bars, CDF, Timeline, Trajectory; tested
// on their points, whiskers, frontiers, marks and brackets), and its
// drawing with gonum.org/v1/plot, encoded as PNG or SVG (Figure.Encode).
// `aiperf plot` writes the files; the HTML report inlines the same SVGs.
package plot
