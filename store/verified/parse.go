package verified

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/ronhq/ron/internal/jsontok"

	"github.com/ronhq/ron/store"
)

// ParseList decodes b, storage's chunk list
// {"id":"b3:…","size":N,"chunk_size":65536,"chunks":["b3:…",…]}, strictly:
// exactly one JSON object of at most MaxListBytes with the four members
// (any order, any whitespace), no unknown or duplicate keys (compared after
// unescaping), no null, no trailing data; id equal to want; size an integer
// written with digits only, 0 … 2^53−1; chunk_size exactly 65536; chunks an
// array of canonical ids whose length is ceil(size / 65536). Every failure
// wraps ErrBadList.
func ParseList(b []byte, want store.ID) (List, error) {
	if len(b) > MaxListBytes {
		return List{}, badListf("%d bytes exceed %d", len(b), MaxListBytes)
	}
	p := &listParser{dec: json.NewDecoder(bytes.NewReader(b))}
	p.dec.UseNumber()
	l, err := p.list()
	if err != nil {
		return List{}, err
	}
	if _, err := p.dec.Token(); err != io.EOF {
		return List{}, badListf("trailing data after the object")
	}
	if l.ID != want {
		return List{}, badListf("id %s, want %s", l.ID, want)
	}
	if err := l.check(); err != nil {
		return List{}, err
	}
	return l, nil
}

// badListf returns an error wrapping ErrBadList.
func badListf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrBadList, fmt.Sprintf(format, args...))
}

// listParser walks the token stream, which (unlike Unmarshal) shows every
// key and so lets duplicates be rejected.
type listParser struct {
	dec *json.Decoder
}

// list reads the top-level object.
func (p *listParser) list() (List, error) {
	if err := p.delim('{', "list"); err != nil {
		return List{}, err
	}
	var l List
	seen := map[string]bool{}
	for p.dec.More() {
		key, err := p.key(seen)
		if err != nil {
			return List{}, err
		}
		if err := p.member(key, &l); err != nil {
			return List{}, err
		}
	}
	if _, err := p.next("list"); err != nil { // the closing '}'
		return List{}, err
	}
	for _, k := range []string{"id", "size", "chunk_size", "chunks"} {
		if !seen[k] {
			return List{}, badListf("%s: missing", k)
		}
	}
	return l, nil
}

// key reads one member name, rejecting duplicates.
func (p *listParser) key(seen map[string]bool) (string, error) {
	t, err := p.next("list")
	if err != nil {
		return "", err
	}
	k, _ := t.(string) // the decoder only yields strings in key position
	if seen[k] {
		return "", badListf("duplicate key %q", clip(k))
	}
	seen[k] = true
	return k, nil
}

// member reads the value of key into l.
func (p *listParser) member(key string, l *List) error {
	var err error
	switch key {
	case "id":
		l.ID, err = p.id("id")
	case "size":
		l.Size, err = p.size()
	case "chunk_size":
		l.ChunkSize, err = p.chunkSize()
	case "chunks":
		l.Chunks, err = p.chunks()
	default:
		err = badListf("unknown field %q", clip(key))
	}
	return err
}

func (p *listParser) id(where string) (store.ID, error) {
	t, err := p.next(where)
	if err != nil {
		return store.ID{}, err
	}
	s, ok := t.(string)
	if !ok {
		return store.ID{}, badListf("%s: want a string, got %s", where, kind(t))
	}
	id, err := store.ParseID(s)
	if err != nil {
		return store.ID{}, badListf("%s: %q is not a canonical id", where, clip(s))
	}
	return id, nil
}

// number reads a non-negative integer written with digits only.
func (p *listParser) number(where string) (int64, error) {
	t, err := p.next(where)
	if err != nil {
		return 0, err
	}
	n, ok := t.(json.Number)
	if !ok {
		return 0, badListf("%s: want an integer, got %s", where, kind(t))
	}
	s := string(n)
	switch {
	case strings.HasPrefix(s, "-"):
		return 0, badListf("%s: %s < 0", where, clip(s))
	case strings.ContainsAny(s, ".eE"):
		return 0, badListf("%s: %s is not an integer (digits only)", where, clip(s))
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v > maxSize {
		return 0, badListf("%s: %s exceeds 2^53-1", where, clip(s))
	}
	return v, nil
}

func (p *listParser) size() (int64, error) { return p.number("size") }

func (p *listParser) chunkSize() (int, error) {
	v, err := p.number("chunk_size")
	if err != nil {
		return 0, err
	}
	if v != store.ChunkSize {
		return 0, badListf("chunk_size %d, want %d", v, store.ChunkSize)
	}
	return int(v), nil
}

func (p *listParser) chunks() ([]store.ID, error) {
	if err := p.delim('[', "chunks"); err != nil {
		return nil, err
	}
	out := []store.ID{}
	for p.dec.More() {
		id, err := p.id(fmt.Sprintf("chunks[%d]", len(out)))
		if err != nil {
			return nil, err
		}
		out = append(out, id)
	}
	_, err := p.next("chunks") // the closing ']'
	return out, err
}

// delim reads the opening delimiter d of the value at where.
func (p *listParser) delim(d json.Delim, where string) error {
	t, err := p.next(where)
	if err != nil {
		return err
	}
	if t != d {
		want := "an object"
		if d == '[' {
			want = "an array"
		}
		return badListf("%s: want %s, got %s", where, want, kind(t))
	}
	return nil
}

// next returns the next token; a premature end and syntax errors are
// invalid input.
func (p *listParser) next(where string) (json.Token, error) {
	t, err := jsontok.Next(p.dec)
	if err != nil {
		return nil, badListf("%s: %v", where, err)
	}
	return t, nil
}

// kind names the JSON type of a value token for error messages.
func kind(t json.Token) string { return jsontok.Kind(t) }

// clip shortens s for error messages.
func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}

// FromFields builds a List from the fields of an already decoded chunk list
// (storage's ChunkList: id, size, chunk_size and chunk ids as strings) with
// ParseList's rules, JSON syntax aside: id must be canonical and equal to
// want, size 0 … 2^53−1, chunkSize 65536, every chunk id canonical and
// ceil(size / 65536) of them. Failures wrap ErrBadList.
func FromFields(want store.ID, id string, size int64, chunkSize int, chunks []string) (List, error) {
	got, err := store.ParseID(id)
	if err != nil {
		return List{}, badListf("id: %q is not a canonical id", clip(id))
	}
	if got != want {
		return List{}, badListf("id %s, want %s", got, want)
	}
	l := List{ID: got, Size: size, ChunkSize: chunkSize, Chunks: make([]store.ID, len(chunks))}
	if err := l.check(); err != nil {
		return List{}, err
	}
	for i, s := range chunks {
		if l.Chunks[i], err = store.ParseID(s); err != nil {
			return List{}, badListf("chunks[%d]: %q is not a canonical id", i, clip(s))
		}
	}
	return l, nil
}
