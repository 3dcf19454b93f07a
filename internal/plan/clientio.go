package plan

import (
	"runtime"
	"time"
)

// Bounds and default of --rx-coalesce-usecs.
const (
	DefaultRxCoalesceUsecs = 20
	maxRxCoalesceUsecs     = 1000
)

// ClientIO holds how the client reads its connections, an extension of
// AIPerf's options embedded in Profile like TraceReplay.
type ClientIO struct {
	RxCoalesceUsecs *int `json:"rx_coalesce_usecs,omitempty" name:"rx-coalesce-usecs" group:"Endpoint" placeholder:"US" help:"Coalesce receive wake-ups as a network card's rx-usecs does (Linux): while events are dense, look at the connections once every US µs and read what landed meanwhile (at most US µs late) instead of waking at each segment, so a busy server is not made to wake the client for every write; 0: a read per wake-up. Default: 20 when the client runs on one CPU (GOMAXPROCS 1, e.g. under taskset), else 0. Stamps are still taken when each event is read."`
}

// RxCoalesce is the client's receive coalescing window (0: off). Unset, it
// is DefaultRxCoalesceUsecs for a process that runs Go on one CPU and off
// for one that runs it on more: measured on two cores, coalescing lowers a
// one-CPU client's cost and its server's, and slows a client that shares
// its cores with the server (docs/performance.md, receive coalescing).
func (c ClientIO) RxCoalesce() time.Duration {
	def := 0
	if runtime.GOMAXPROCS(0) == 1 {
		def = DefaultRxCoalesceUsecs
	}
	return time.Duration(deref(c.RxCoalesceUsecs, def)) * time.Microsecond
}

// clientIO checks --rx-coalesce-usecs.
func (v *validator) clientIO(p *Profile) {
	v.intRange("rx_coalesce_usecs", p.RxCoalesceUsecs, 0, maxRxCoalesceUsecs)
}
