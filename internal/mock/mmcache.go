package mock

import (
	"container/list"
	"fmt"
	"hash/maphash"
	"sync"
)

// vLLM keys its multimodal caches by an image part's "uuid" when the client
// gives one (AIPerf's image_uuids, --uuid-and-strip): the image's processed
// form is cached under the uuid, its prompt tokens hash by the uuid rather
// than its bytes, and a later part may carry the uuid alone ({"url": ""} or
// no image_url), served from the cache or failed when the cache does not
// hold it. The mock keeps each uuid's token count, the last MMCacheItems
// uuids sent with their image, under a 64-bit hash of the uuid: however
// long the uuids a client sends, the cache holds MMCacheItems small entries.

// MMCacheItems bounds the uuids the mock's multimodal cache holds (least
// recently used out first).
const MMCacheItems = 4096

// mmCache is the uuid → image tokens cache, an LRU of MMCacheItems.
type mmCache struct {
	mu    sync.Mutex
	seed  maphash.Seed
	order list.List // of *mmEntry, most recent first
	items map[uint64]*list.Element
}

type mmEntry struct {
	key    uint64
	tokens int
}

// put records uuid's token count as most recently used.
func (c *mmCache) put(uuid string, tokens int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.items == nil {
		c.seed, c.items = maphash.MakeSeed(), map[uint64]*list.Element{}
	}
	key := maphash.String(c.seed, uuid)
	if e, ok := c.items[key]; ok {
		e.Value.(*mmEntry).tokens = tokens
		c.order.MoveToFront(e)
		return
	}
	c.items[key] = c.order.PushFront(&mmEntry{key, tokens})
	if c.order.Len() > MMCacheItems {
		old := c.order.Remove(c.order.Back()).(*mmEntry)
		delete(c.items, old.key)
	}
}

// get returns uuid's token count, marking it most recently used.
func (c *mmCache) get(uuid string) (int, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.items == nil {
		return 0, false
	}
	e, ok := c.items[maphash.String(c.seed, uuid)]
	if !ok {
		return 0, false
	}
	c.order.MoveToFront(e)
	return e.Value.(*mmEntry).tokens, true
}

// uuidImageIDs are the token ids of an image part with a uuid: its image
// counted (and its count cached) when the part carries one, else the
// cached count; ids derived from the uuid.
func (s *Server) uuidImageIDs(p *contentPart) ([]uint32, error) {
	key := []byte("mm-uuid:" + p.UUID)
	if p.ImageURL == nil || p.ImageURL.URL == "" {
		n, ok := s.mm.get(p.UUID)
		if !ok {
			return nil, fmt.Errorf("image_url: uuid %q is not in the multimodal cache: send the image with its uuid first", clip(p.UUID))
		}
		return mediaIDs(key, n), nil
	}
	ids, err := s.imageIDs(p.ImageURL.URL)
	if err != nil {
		return nil, err
	}
	s.mm.put(p.UUID, len(ids))
	return mediaIDs(key, len(ids)), nil
}
