package dataset

import (
	"container/list"
	"errors"
	"sync"
)

// wekaCacheBytes is how much trace file (its bytes on disk) a weka_trace
// set keeps parsed.
const wekaCacheBytes = 64 << 20

// wekaCache keeps the trace files read back last, parsed, within a budget
// of their files' bytes (the most recent one always): a trace's main agent
// and its subagents are conversations read one after another, and each
// would otherwise parse the whole file again, a cost that grows with the
// square of a file's subagents. Concurrent readers of one file wait for a
// single parse; a failed parse is not kept.
type wekaCache struct {
	mu     sync.Mutex
	budget int
	used   int
	lru    *list.List // of *wekaEntry, the most recent first
	files  map[int]*list.Element
}

type wekaEntry struct {
	file  int
	ready chan struct{} // closed once tr or err is set
	tr    *parsedWeka
	err   error
}

func newWekaCache(budget int) wekaCache {
	return wekaCache{budget: budget, lru: list.New(), files: map[int]*list.Element{}}
}

// get returns file's parsed trace, calling load when it is not kept.
func (c *wekaCache) get(file int, load func() (*parsedWeka, error)) (*parsedWeka, error) {
	c.mu.Lock()
	if el, ok := c.files[file]; ok {
		c.lru.MoveToFront(el)
		e := el.Value.(*wekaEntry)
		c.mu.Unlock()
		<-e.ready
		return e.tr, e.err
	}
	e := &wekaEntry{file: file, ready: make(chan struct{})}
	c.files[file] = c.lru.PushFront(e)
	c.mu.Unlock()

	loaded := false
	defer func() {
		if !loaded { // load panicked: its waiters must not wait for ever
			c.settle(e, nil, errors.New("reading the trace file panicked"))
		}
	}()
	tr, err := load()
	loaded = true
	c.settle(e, tr, err)
	return tr, err
}

// settle records how e's load ended and wakes its waiters: a trace is
// kept and counted (dropping others over the budget), an error dropped.
func (c *wekaCache) settle(e *wekaEntry, tr *parsedWeka, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e.tr, e.err = tr, err
	close(e.ready)
	if err != nil {
		c.lru.Remove(c.files[e.file])
		delete(c.files, e.file)
		return
	}
	c.used += tr.size
	c.evict()
}

// evict drops the least recently used parsed files over the budget,
// keeping the most recent one, and those still being read.
func (c *wekaCache) evict() {
	for el := c.lru.Back(); el != nil && c.used > c.budget && el != c.lru.Front(); {
		prev := el.Prev()
		e := el.Value.(*wekaEntry)
		select {
		case <-e.ready:
			c.lru.Remove(el)
			delete(c.files, e.file)
			c.used -= e.tr.size
		default: // its parse has not ended: counted once it has
		}
		el = prev
	}
}
