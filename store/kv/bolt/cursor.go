package bolt

import (
	"bytes"

	bbolt "go.etcd.io/bbolt"
)

// cursor wraps a bbolt cursor. It remembers its key and the bucket's mod
// count; after a write to the bucket, Next and Prev reposition by Seek
// (bbolt cursors are invalidated by writes). The remembered key stays valid
// for the transaction: it points into the memory map or into a buffer
// copied by Put.
type cursor struct {
	b   *bucket
	bc  *bbolt.Cursor // created lazily
	key []byte
	mod uint64
	ok  bool
}

func (c *cursor) First() (k, v []byte) {
	if !c.b.readable() {
		return c.set(nil, nil)
	}
	return c.set(c.cur().First())
}

func (c *cursor) Last() (k, v []byte) {
	if !c.b.readable() {
		return c.set(nil, nil)
	}
	return c.set(c.cur().Last())
}

func (c *cursor) Seek(seek []byte) (k, v []byte) {
	if !c.b.readable() {
		return c.set(nil, nil)
	}
	return c.set(c.cur().Seek(seek))
}

func (c *cursor) Next() (k, v []byte) {
	if !c.ok || !c.b.readable() {
		return c.set(nil, nil)
	}
	if c.mod == c.b.mod {
		return c.set(c.bc.Next())
	}
	k, v = c.bc.Seek(c.key)
	if k != nil && bytes.Equal(k, c.key) {
		k, v = c.bc.Next()
	}
	return c.set(k, v)
}

func (c *cursor) Prev() (k, v []byte) {
	if !c.ok || !c.b.readable() {
		return c.set(nil, nil)
	}
	if c.mod == c.b.mod {
		return c.set(c.bc.Prev())
	}
	// Seek lands on the first key >= c.key; the one before it is the last
	// key < c.key. Past the end, that is the last key.
	if k, _ := c.bc.Seek(c.key); k == nil {
		return c.set(c.bc.Last())
	}
	return c.set(c.bc.Prev())
}

func (c *cursor) cur() *bbolt.Cursor {
	if c.bc == nil {
		c.bc = c.b.bb.Cursor()
	}
	return c.bc
}

// set records the landing position; a nil key unpositions the cursor.
func (c *cursor) set(k, v []byte) ([]byte, []byte) {
	if k == nil {
		c.ok, c.key = false, nil
		return nil, nil
	}
	c.key, c.mod, c.ok = k, c.b.mod, true
	return k, v
}
