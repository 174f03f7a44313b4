// Package memory is the RAM-only BlobStore engine (amnesia mode): object
// bytes, chunk digests and metadata live in memory under a byte capacity,
// reads are verified like the fs engine's, and nothing touches disk.
package memory

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/ronhq/ron/store"
	"github.com/ronhq/ron/store/bao"
)

// DefaultMaxBytes is the capacity used when Options.MaxBytes is 0.
const DefaultMaxBytes = 1 << 30

// Options configures a memory Store.
type Options struct {
	// MaxBytes is the capacity in object bytes; 0 = 1 GiB. A Put that
	// would exceed it fails with ErrNoSpace.
	MaxBytes int64
	// OnCorrupt is called after an object was found corrupt and quarantined.
	OnCorrupt func(id store.ID, chunk int, kind string)
	// OnSidecarRebuilt is never called (there are no sidecars); it exists
	// for symmetry with fs.Options.
	OnSidecarRebuilt func(id store.ID)
	// Now is the clock; nil = time.Now.
	Now func() time.Time
}

// Store is the memory engine. It implements store.BlobStore and is safe for
// concurrent use.
type Store struct {
	opt   Options
	hooks store.Hooks

	mu          sync.RWMutex
	objects     map[store.ID]*entry
	quarantined map[store.ID]struct{}
	used        int64 // stored plus reserved by Puts in progress
	stored      int64
	closed      bool
}

var _ store.BlobStore = (*Store)(nil)

// entry is an immutable stored object.
type entry struct {
	sc     store.Sidecar
	chunks [][]byte // chunk i's bytes, slices of the segments
}

// New returns an empty memory store.
func New(opt Options) *Store {
	if opt.MaxBytes == 0 {
		opt.MaxBytes = DefaultMaxBytes
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	return &Store{
		opt: opt, hooks: store.Hooks{OnCorrupt: opt.OnCorrupt, OnSidecarRebuilt: opt.OnSidecarRebuilt},
		objects: map[store.ID]*entry{}, quarantined: map[store.ID]struct{}{},
	}
}

// Put streams r into memory, reserving capacity as bytes arrive.
func (s *Store) Put(ctx context.Context, r io.Reader, opt store.PutOptions) (store.Info, bool, error) {
	if err := s.check(ctx); err != nil {
		return store.Info{}, false, err
	}
	if err := opt.Meta.Validate(); err != nil {
		return store.Info{}, false, err
	}
	rec := &receiver{s: s}
	in, err := store.Ingest(ctx, r, store.IngestOptions{MaxBytes: opt.MaxBytes, Size: opt.Size, Keep: true}, rec.add)
	if err == nil {
		err = in.Finish(rec.stored())
	}
	if err == nil && opt.Want != nil && *opt.Want != in.ID {
		err = &store.HashMismatchError{Expected: *opt.Want, Actual: in.ID}
	}
	if err == nil {
		err = ctx.Err()
	}
	if err != nil {
		s.release(rec.reserved)
		return store.Info{}, false, err
	}
	sc := store.NewSidecar(in.ID, in.Size, in.Outboard, opt.Meta, s.opt.Now())
	return s.commit(&entry{sc: sc, chunks: split(rec.segs)}, rec.reserved)
}

// receiver collects the segments of one Put.
type receiver struct {
	s        *Store
	segs     [][]byte
	reserved int64
}

func (r *receiver) add(b []byte) error {
	if err := r.s.reserve(int64(len(b))); err != nil {
		return err
	}
	r.reserved += int64(len(b))
	if cap(b) >= 2*len(b) {
		b = bytes.Clone(b) // a short last segment: drop the larger backing array
	}
	r.segs = append(r.segs, b)
	return nil
}

// stored reads back the segments received.
func (r *receiver) stored() io.Reader {
	rs := make([]io.Reader, len(r.segs))
	for i, seg := range r.segs {
		rs[i] = bytes.NewReader(seg)
	}
	return io.MultiReader(rs...)
}

// split cuts segments (each a multiple of ChunkSize except the last) into
// chunk slices.
func split(segs [][]byte) [][]byte {
	var out [][]byte
	for _, seg := range segs {
		for len(seg) > 0 {
			n := min(len(seg), store.ChunkSize)
			out = append(out, seg[:n:n])
			seg = seg[n:]
		}
	}
	return out
}

func (s *Store) reserve(n int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.used+n > s.opt.MaxBytes {
		return fmt.Errorf("%w: memory capacity %d bytes reached", store.ErrNoSpace, s.opt.MaxBytes)
	}
	s.used += n
	return nil
}

func (s *Store) release(n int64) {
	s.mu.Lock()
	s.used -= n
	s.mu.Unlock()
}

// commit inserts e unless its id is held; reserved bytes become stored or
// are released.
func (s *Store) commit(e *entry, reserved int64) (store.Info, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		s.used -= reserved
		return store.Info{}, false, store.ErrClosed
	}
	if old, ok := s.objects[e.sc.Digest]; ok {
		s.used -= reserved
		return old.sc.Info(), false, nil
	}
	s.objects[e.sc.Digest] = e
	delete(s.quarantined, e.sc.Digest)
	s.stored += e.sc.Size
	return e.sc.Info(), true, nil
}

func (s *Store) check(ctx context.Context) error {
	s.mu.RLock()
	closed := s.closed
	s.mu.RUnlock()
	if closed {
		return store.ErrClosed
	}
	return ctx.Err()
}

// lookup returns the entry of id, ErrQuarantined or ErrNotFound.
func (s *Store) lookup(ctx context.Context, id store.ID) (*entry, error) {
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if e, ok := s.objects[id]; ok {
		return e, nil
	}
	if _, ok := s.quarantined[id]; ok {
		return nil, store.ErrQuarantined
	}
	return nil, store.ErrNotFound
}

// Open returns a verified reader of id.
func (s *Store) Open(ctx context.Context, id store.ID) (store.Object, error) {
	e, err := s.lookup(ctx, id)
	if err != nil {
		return nil, err
	}
	return &object{s: s, e: e}, nil
}

// Stat describes id.
func (s *Store) Stat(ctx context.Context, id store.ID) (store.Info, error) {
	e, err := s.lookup(ctx, id)
	if err != nil {
		return store.Info{}, err
	}
	return e.sc.Info(), nil
}

// Delete forgets id and frees its bytes.
func (s *Store) Delete(ctx context.Context, id store.ID) error {
	if err := s.check(ctx); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.removeLocked(id, nil) {
		return store.ErrNotFound
	}
	return nil
}

// removeLocked drops id (only if it is still e, when e is set) and reports
// whether it did. s.mu must be held.
func (s *Store) removeLocked(id store.ID, e *entry) bool {
	cur, ok := s.objects[id]
	if !ok || (e != nil && cur != e) {
		return false
	}
	delete(s.objects, id)
	s.used -= cur.sc.Size
	s.stored -= cur.sc.Size
	return true
}

// Quarantine drops the bytes of id and remembers it as quarantined.
func (s *Store) Quarantine(ctx context.Context, id store.ID, reason string) error {
	if err := s.check(ctx); err != nil {
		return err
	}
	if !s.quarantine(id, nil) {
		return store.ErrNotFound
	}
	return nil
}

// quarantine atomically replaces id (if still e, when e is set) by a
// quarantine marker.
func (s *Store) quarantine(id store.ID, e *entry) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.removeLocked(id, e) {
		return false
	}
	s.quarantined[id] = struct{}{}
	return true
}

// List returns held ids above after in hex order, at most limit (≤ 0: all).
func (s *Store) List(ctx context.Context, after *store.ID, limit int) ([]store.Info, error) {
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	s.mu.RLock()
	out := make([]store.Info, 0, len(s.objects))
	for id, e := range s.objects {
		if after == nil || bytes.Compare(id[:], after[:]) > 0 {
			out = append(out, e.sc.Info())
		}
	}
	s.mu.RUnlock()
	slices.SortFunc(out, func(a, b store.Info) int { return bytes.Compare(a.ID[:], b.ID[:]) })
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// Has reports which ids are held.
func (s *Store) Has(ctx context.Context, ids []store.ID) ([]bool, error) {
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	out := make([]bool, len(ids))
	s.mu.RLock()
	defer s.mu.RUnlock()
	for i, id := range ids {
		_, out[i] = s.objects[id]
	}
	return out, nil
}

// Free returns capacity minus bytes stored or reserved.
func (s *Store) Free() (int64, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return 0, store.ErrClosed
	}
	return s.opt.MaxBytes - s.used, nil
}

// Probe always succeeds on an open store.
func (s *Store) Probe(ctx context.Context) error { return s.check(ctx) }

// Stats returns exact counts.
func (s *Store) Stats() store.Stats {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return store.Stats{Objects: int64(len(s.objects)), Bytes: s.stored, Quarantined: int64(len(s.quarantined))}
}

// Close drops every object; later calls fail with ErrClosed.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	s.objects = map[store.ID]*entry{}
	s.used, s.stored = 0, 0
	return nil
}

// Upgrade implements store.BlobStore: memory objects are always v2, so it
// only reports ErrNotFound, ErrQuarantined, or false.
func (s *Store) Upgrade(ctx context.Context, id store.ID) (bool, error) {
	_, err := s.Stat(ctx, id)
	return false, err
}

// object is an open memory object.
type object struct {
	s *Store
	e *entry
}

func (o *object) Info() store.Info       { return o.e.sc.Info() }
func (o *object) Outboard() bao.Outboard { return o.e.sc.Outboard }
func (o *object) Close() error           { return nil }

// ReadChunk copies chunk i into buf and verifies it.
func (o *object) ReadChunk(i int, buf []byte) ([]byte, error) {
	n, err := store.CheckChunkArgs(o.e.sc.Size, i, buf)
	if err != nil {
		return nil, err
	}
	b := buf[:copy(buf[:n], o.e.chunks[i])]
	if err := o.e.sc.CheckChunk(i, b); err != nil {
		if o.s.quarantine(o.e.sc.Digest, o.e) {
			o.s.hooks.Corrupt(o.e.sc.Digest, i, store.KindData)
		}
		return nil, err
	}
	return b, nil
}
