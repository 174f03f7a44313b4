package sites

import (
	"container/list"
	"sync"
)

// weightedLRU is a mutex-guarded LRU cache bounded by the sum of its
// entries' weights. Safe for concurrent use; no method does I/O.
type weightedLRU[K comparable, V any] struct {
	mu    sync.Mutex
	max   int64
	used  int64
	order *list.List // front = most recently used; values are *lruItem[K, V]
	items map[K]*list.Element
}

type lruItem[K comparable, V any] struct {
	key    K
	val    V
	weight int64
}

func newWeightedLRU[K comparable, V any](max int64) *weightedLRU[K, V] {
	return &weightedLRU[K, V]{max: max, order: list.New(), items: map[K]*list.Element{}}
}

// Get returns the value of k and marks it most recently used.
func (c *weightedLRU[K, V]) Get(k K) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.items[k]
	if !ok {
		var zero V
		return zero, false
	}
	c.order.MoveToFront(el)
	return el.Value.(*lruItem[K, V]).val, true
}

// Add stores v under k with the given weight (replacing an older value),
// then evicts least recently used entries until the total fits. A value
// heavier than the whole budget is not stored; Add reports whether v was.
func (c *weightedLRU[K, V]) Add(k K, v V, weight int64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[k]; ok {
		c.remove(el)
	}
	if weight > c.max {
		return false
	}
	c.items[k] = c.order.PushFront(&lruItem[K, V]{key: k, val: v, weight: weight})
	c.used += weight
	c.shrink()
	return true
}

// SetMax changes the budget, evicting at once if the cache is now over it.
func (c *weightedLRU[K, V]) SetMax(max int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.max = max
	c.shrink()
}

// Stats returns the number of entries and their total weight.
func (c *weightedLRU[K, V]) Stats() (entries int, weight int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.items), c.used
}

func (c *weightedLRU[K, V]) shrink() {
	for c.used > c.max && c.order.Len() > 0 {
		c.remove(c.order.Back())
	}
}

func (c *weightedLRU[K, V]) remove(el *list.Element) {
	it := el.Value.(*lruItem[K, V])
	c.order.Remove(el)
	delete(c.items, it.key)
	c.used -= it.weight
}
