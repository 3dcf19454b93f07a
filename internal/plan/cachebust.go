package plan

// --cache-bust targets (AIPerf's CacheBustTarget).
const (
	CacheBustNone                     = "none"
	CacheBustSystemPrefix             = "system_prefix"
	CacheBustSystemSuffix             = "system_suffix"
	CacheBustFirstTurnPrefix          = "first_turn_prefix"
	CacheBustFirstTurnSuffix          = "first_turn_suffix"
	CacheBustWarmupIsolationSystem    = "warmup_isolation_system"
	CacheBustWarmupIsolationFirstTurn = "warmup_isolation_first_turn"
)

// cacheBust checks --cache-bust with AIPerf's rule: warmup_isolation_system
// on synthetic data needs a system message to mark.
func (v *validator) cacheBust(p *Profile) {
	v.oneOf("cache_bust", p.CacheBust, "", CacheBustNone, CacheBustSystemPrefix, CacheBustSystemSuffix,
		CacheBustFirstTurnPrefix, CacheBustFirstTurnSuffix, CacheBustWarmupIsolationSystem, CacheBustWarmupIsolationFirstTurn)
	v.check(p.CacheBust != CacheBustWarmupIsolationSystem || p.InputFile != "" || p.HasSystemPrompt() ||
		p.SharedSystemPromptLength != nil && *p.SharedSystemPromptLength > 0, "cache_bust",
		"warmup_isolation_system needs a system message to mark: give --shared-system-prompt-length or --system-prompt, "+
			"or use warmup_isolation_first_turn")
}
