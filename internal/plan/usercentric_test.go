package plan

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestUserCentricPhase(t *testing.T) {
	p := valid()
	p.UserCentricRate, p.NumUsers, p.ConversationTurnMean = Ptr(2.0), Ptr(15), 20
	p.RequestRate = Ptr(9.0) // user-centric takes precedence, as in AIPerf
	p.BenchmarkDuration = Ptr(10.0)
	require.NoError(t, p.Check())
	phases := p.PhaseList()
	require.Len(t, phases, 1)
	ph := phases[0]
	assert.Equal(t, 2.0, ph.Rate)
	assert.Equal(t, 15, ph.Users)
	assert.Zero(t, ph.Concurrency, "no cap unless --concurrency is given")
	assert.Equal(t, "profiling(user-centric 2 req/s, 15 users, 10s)", ph.String())

	p.Concurrency, p.WarmupRequestCount = Ptr(15), Ptr(4)
	phases = p.PhaseList()
	require.Len(t, phases, 2)
	assert.Equal(t, 15, phases[1].Concurrency, "--concurrency caps the users' requests")
	w := phases[0]
	assert.Zero(t, w.Users, "the warmup runs in rate mode")
	assert.Equal(t, 2.0, w.Rate)
	assert.Equal(t, RatePoisson, w.RateMode)
}

func TestUserCentricRefused(t *testing.T) {
	assertRefused(t, map[string]refusal{
		"users without the rate": {func(p *Profile) { p.NumUsers, p.ConversationTurnMean = Ptr(4), 3 },
			"--num-users needs --user-centric-rate"},
		"rate without users": {func(p *Profile) { p.UserCentricRate, p.ConversationTurnMean = Ptr(1.0), 3 },
			"--user-centric-rate needs --num-users"},
		"single-turn data": {func(p *Profile) { p.UserCentricRate, p.NumUsers = Ptr(1.0), Ptr(4) },
			"--user-centric-rate needs multi-turn data: set --session-turns-mean to 2 or more (for single-turn work use --request-rate)"},
		"zero users": {func(p *Profile) { p.UserCentricRate, p.NumUsers, p.ConversationTurnMean = Ptr(1.0), Ptr(0), 3 },
			"--num-users must be"},
		"zero rate": {func(p *Profile) { p.UserCentricRate, p.NumUsers, p.ConversationTurnMean = Ptr(0.0), Ptr(2), 3 },
			"--user-centric-rate must be greater than 0, got 0"},
		"fixed schedule": {func(p *Profile) {
			p.UserCentricRate, p.NumUsers, p.FixedSchedule, p.InputFile = Ptr(1.0), Ptr(2), true, "trace.jsonl"
		}, "--user-centric-rate cannot be used with a fixed schedule"},
		"listed phase": {func(p *Profile) {
			p.Phases = []Phase{{Name: "p", Kind: KindProfiling, Rate: 2, RateMode: RateConstant, Users: 3, Requests: 3}}
		}, "phases[0].users is set by --user-centric-rate"},
	})
}
