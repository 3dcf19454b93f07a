package load

import (
	"slices"
	"sync"
	"time"
)

// StallMonitor measures how late a goroutine that sleeps a fixed tick wakes
// up. When the client process is CPU-starved (or stopped by GC), every
// goroutine — the pacer and the response readers included — runs late by the
// same amount, so this is the client's own health signal.
type StallMonitor struct {
	tick time.Duration
	stop chan struct{}
	done chan struct{}
	mu   sync.Mutex
	late []time.Duration
}

// StartStallMonitor starts sampling every tick until Stop.
func StartStallMonitor(tick time.Duration) *StallMonitor {
	m := &StallMonitor{tick: tick, stop: make(chan struct{}), done: make(chan struct{})}
	go m.loop()
	return m
}

func (m *StallMonitor) loop() {
	defer close(m.done)
	t := time.NewTimer(m.tick)
	defer t.Stop()
	for {
		want := time.Now().Add(m.tick)
		t.Reset(m.tick)
		select {
		case <-m.stop:
			return
		case <-t.C:
		}
		m.mu.Lock()
		m.late = append(m.late, time.Since(want))
		m.mu.Unlock()
	}
}

// Stop ends sampling and returns the p99 and maximum wake-up lateness.
func (m *StallMonitor) Stop() (p99, worst time.Duration) {
	close(m.stop)
	<-m.done
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.late) == 0 {
		return 0, 0
	}
	s := slices.Clone(m.late)
	slices.Sort(s)
	return s[(len(s)-1)*99/100], s[len(s)-1]
}
