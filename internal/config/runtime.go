package config

import (
	"go.yaml.in/yaml/v3"
)

// runtimeFields are the keys of the body's runtime: section, AIPerf's
// RuntimeConfig (src/aiperf/config/runtime.py): ui and workers map to this
// client's --ui and --workers-max (runtime.workers is what AIPerf's own
// --workers-max sets); the counts and settings of AIPerf's internal
// services mean nothing to a single Go process and are read, checked and
// ignored with a note; its service API and Kubernetes run type are refused.
func (d *decoder) runtimeFields() []field {
	rt := &d.f.Runtime
	count := func(path string, v *yaml.Node) bool {
		n, ok := d.int(path, v)
		if ok && n < 1 {
			d.errorf(v, path, "must be at least 1, got %d", n)
			return false
		}
		return ok
	}
	ignored := func(what string, check func(string, *yaml.Node) bool) func(string, *yaml.Node) {
		return func(path string, v *yaml.Node) {
			if v.ShortTag() == tagNull || check(path, v) {
				d.note(v, path, "is %s, which has no counterpart here: ignored", what)
			}
		}
	}
	return []field{
		{keys("ui"), func(path string, v *yaml.Node) {
			ui, ok := d.enum(path, v, "dashboard", "simple", "none", "tqdm")
			if !ok {
				return
			}
			if ui == "tqdm" {
				d.note(v, path, "tqdm (AIPerf's progress bars) is read as simple, the progress line here")
				ui = "simple"
			}
			rt.UI = ui
			d.mark("ui", v, path)
		}},
		{keys("workers"), func(path string, v *yaml.Node) {
			if v.ShortTag() == tagNull { // AIPerf's default: as many as it sees fit
				return
			}
			if count(path, v) {
				rt.WorkersMax, _ = d.int(path, v)
				d.mark("workers_max", v, path)
			}
		}},
		{keys("record_processors"), ignored("the number of AIPerf's record-processor services (records are processed in this one process)", count)},
		{keys("record_processors_per_pod"), ignored("how AIPerf packs its record processors into Kubernetes pods", count)},
		{keys("workers_per_pod"), ignored("how AIPerf packs its workers into Kubernetes pods", count)},
		{keys("workers_min"), ignored("the floor of AIPerf's adaptive worker ramp", count)},
		{keys("communication"), ignored("the ZMQ bus between AIPerf's services (this client is one process; --workers talk over pipes)",
			func(path string, v *yaml.Node) bool { return d.mapping(v, path) })},
		{keys("dataset_api_base_url"), ignored("set by AIPerf's Kubernetes operator for its worker pods",
			func(path string, v *yaml.Node) bool { _, ok := d.str(path, v); return ok })},
		{keys("stats_interval"), ignored("the cadence of AIPerf's realtime stats log block",
			func(path string, v *yaml.Node) bool {
				x, ok := d.float(path, v)
				if ok && x < 0 {
					d.errorf(v, path, "must be at least 0, got %v", x)
					return false
				}
				return ok
			})},
		{keys("service_run_type"), d.notYetUnless("multiprocessing", "service_run_type other than multiprocessing",
			"use aiperf profile --workers N, with --executor kubernetes for worker pods")},
		{keys("api_port"), d.notYet("api_port: (AIPerf's HTTP and WebSocket service API)", "serve live metrics with aiperf profile --metrics-listen")},
		{keys("api_host"), d.notYet("api_host: (AIPerf's HTTP and WebSocket service API)", "serve live metrics with aiperf profile --metrics-listen")},
	}
}
