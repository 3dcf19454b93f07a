package metrics

// AIPerf's coordinated-omission-aware latencies, from the time the load
// engine issued each request's credit (Record.IssuedNs): the user asked
// then, whatever the sender's queue made it wait before sending.
const (
	TagEffectiveLatency     = "effective_latency"
	TagCreditToStartLatency = "credit_to_start_latency"
)

// issuedDefs are the credit-issue latencies, distributions over the
// successful requests whose credit's issue time is known: effective_latency
// (end − credit issued; AIPerf's "Effective" console table) and
// credit_to_start_latency (send − credit issued; exported only).
var issuedDefs = [...]def{
	{TagEffectiveLatency, "Effective Latency (CO-aware)", UnitMs},
	{TagCreditToStartLatency, "Credit-to-Start Latency", UnitMs},
}

// issuedLatencies returns the credit-issue latency metrics of records
// (issuedDefs), none when no successful request's issue time is known (a
// record read back from the store has none). A negative interval (clock
// noise) reads 0, as AIPerf clamps it. Failed requests are left out, as
// from every other latency: a failure's time to error would sit in the
// successes' distribution.
func issuedLatencies(records []Record) []Metric {
	var effective, toStart []float64
	for i := range records {
		r := &records[i]
		if !r.OK() || r.IssuedNs == 0 {
			continue
		}
		effective = append(effective, ms(max(r.EndNs-r.IssuedNs, 0)))
		toStart = append(toStart, ms(max(r.SentNs-r.IssuedNs, 0)))
	}
	if len(effective) == 0 {
		return nil
	}
	var out []Metric
	for k, vals := range [...][]float64{effective, toStart} {
		d, st := issuedDefs[k], Compute(vals)
		out = append(out, Metric{Tag: d.tag, Header: d.header, Unit: d.unit, Stats: &st})
	}
	return out
}
