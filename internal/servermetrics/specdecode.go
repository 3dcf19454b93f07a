package servermetrics

// specDecode adds the server's speculative-decoding acceptance over the
// span: vLLM's counters give the draft acceptance rate (accepted over
// proposed draft tokens) and the acceptance length (1 + accepted over
// drafts, the tokens each verify step emits); SGLang's gauges give both
// directly (their average), as AIPerf's speculative-decoding table.
func (h *headline) specDecode() {
	accName, accepted := h.pick(roleSpecAccepted)
	if accName != "" {
		acc := sumStat(accepted, "total")
		if name, ss := h.pick(roleSpecDraftTokens); name != "" {
			if d := sumStat(ss, "total"); d > 0 {
				h.add(Row{Name: "Spec decode acceptance rate", Stat: "ratio", Value: 100 * acc / d, Unit: "%",
					Metric: accName + " / " + name})
			}
		}
		if name, ss := h.pick(roleSpecDrafts); name != "" {
			if d := sumStat(ss, "total"); d > 0 {
				h.add(Row{Name: "Spec decode acceptance length", Stat: "ratio", Value: 1 + acc/d, Unit: "tokens/step",
					Metric: "1 + " + accName + " / " + name})
			}
		}
		return
	}
	h.gauges(roleSpecAcceptRate, "%", 100, "avg")
	h.gauges(roleSpecAcceptLength, "tokens/step", 1, "avg")
}
