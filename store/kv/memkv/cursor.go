package memkv

// cursor is a kv.Cursor. It remembers its index, its key and the bucket's
// mod count when it last moved; if the bucket was written since, Next and
// Prev relocate by key.
type cursor struct {
	b   *bucket
	i   int
	key []byte
	mod uint64
	ok  bool // positioned on a key
}

func (c *cursor) First() (k, v []byte) { return c.at(0) }

func (c *cursor) Last() (k, v []byte) {
	if !c.b.readable() {
		return c.at(-1)
	}
	return c.at(len(c.b.t.entries) - 1)
}

func (c *cursor) Seek(seek []byte) (k, v []byte) {
	if !c.b.readable() {
		return c.at(-1)
	}
	i, _ := c.b.search(seek)
	return c.at(i)
}

func (c *cursor) Next() (k, v []byte) {
	if !c.ok || !c.b.readable() {
		return c.at(-1)
	}
	if c.mod == c.b.mod {
		return c.at(c.i + 1)
	}
	i, found := c.b.search(c.key)
	if found {
		i++
	}
	return c.at(i)
}

func (c *cursor) Prev() (k, v []byte) {
	if !c.ok || !c.b.readable() {
		return c.at(-1)
	}
	if c.mod == c.b.mod {
		return c.at(c.i - 1)
	}
	i, _ := c.b.search(c.key) // entries[i-1] is the last key < c.key
	return c.at(i - 1)
}

// at positions the cursor on index i, or unpositions it when i is out of
// range or the bucket is unreadable.
func (c *cursor) at(i int) (k, v []byte) {
	if !c.b.readable() || i < 0 || i >= len(c.b.t.entries) {
		c.ok, c.key = false, nil
		return nil, nil
	}
	e := c.b.t.entries[i]
	c.i, c.key, c.mod, c.ok = i, e.k, c.b.mod, true
	return e.k, e.v
}
