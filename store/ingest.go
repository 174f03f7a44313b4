package store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/ronhq/ron/store/bao"
)

// ReadSize is the largest single read Ingest issues (1 MiB, a multiple of
// ChunkSize).
const ReadSize = 1 << 20

// pipelineBuffers is the number of pooled buffers per Ingest: one being
// filled while the others are hashed.
const pipelineBuffers = 3

var bufPool = sync.Pool{New: func() any { b := make([]byte, ReadSize); return &b }}

// IngestOptions configures Ingest.
type IngestOptions struct {
	// MaxBytes caps the stream; 0 = no cap. Reading stops at the crossing
	// byte with ErrTooLarge.
	MaxBytes int64
	// Size is the stream's length when it is known in advance (a
	// Content-Length); 0 means unknown. With it Ingest hashes while it
	// reads; without it (or when the stream turns out to have another
	// length) the caller hashes what it stored with Ingested.Finish.
	Size int64
	// Keep means the sink retains the buffers it is given: Ingest then
	// allocates a fresh buffer per read instead of recycling pooled ones.
	// Buffers then start at ChunkSize and double up to ReadSize; every
	// buffer except the last is a multiple of ChunkSize long.
	Keep bool
}

// Ingested is the result of a successful Ingest.
type Ingested struct {
	// ID and Outboard are set once the bytes were hashed (Hashed).
	ID       ID
	Outboard bao.Outboard
	Size     int64
}

// Hashed reports whether ID and Outboard are set.
func (in *Ingested) Hashed() bool { return in.Outboard != nil }

// Finish hashes stored, the in.Size bytes Ingest handed to its sink, when
// Ingest did not (Hashed is false), setting ID and Outboard; it does
// nothing otherwise. stored is read only then.
func (in *Ingested) Finish(stored io.Reader) error {
	if in.Hashed() {
		return nil
	}
	ob, id, err := bao.Encode(stored, in.Size)
	if err != nil {
		return fmt.Errorf("store: hash the stored body: %w", err)
	}
	in.ID, in.Outboard = id, ob
	return nil
}

// Ingest reads r to EOF in reads of at most ReadSize bytes and hands every
// buffer to sink (on the calling goroutine). When opt.Size states the
// length, a hashing goroutine computes the id and the Bao outboard from the
// same buffers concurrently (they are shared, never copied); otherwise the
// caller hashes the stored bytes with Ingested.Finish, which costs one
// pass as well. Without Keep, sink must not retain its argument. The
// context is checked between reads. Errors: the context's error,
// ErrTooLarge, sink's error, or the reader's error wrapped with %w. The
// hashing goroutine has ended when Ingest returns.
func Ingest(ctx context.Context, r io.Reader, opt IngestOptions, sink func([]byte) error) (Ingested, error) {
	p := newPipeline(opt.Keep, opt.Size)
	size, err := p.pump(ctx, r, opt.MaxBytes, sink)
	ob, id := p.finish(err != nil)
	if err != nil {
		return Ingested{}, err
	}
	// ob is set only when the stream had exactly opt.Size bytes (runTree).
	return Ingested{ID: id, Outboard: ob, Size: size}, nil
}

// pbuf is a buffer shared by the sink and the hasher.
type pbuf struct {
	b *[]byte
	n int
}

type pipeline struct {
	keep bool
	tree chan *pbuf // nil when the size is unknown: nothing hashes
	free chan *pbuf
	wg   sync.WaitGroup
	ob   bao.Outboard
	id   ID
}

func newPipeline(keep bool, size int64) *pipeline {
	p := &pipeline{keep: keep}
	if !keep {
		p.free = make(chan *pbuf, pipelineBuffers)
		for range pipelineBuffers {
			p.free <- &pbuf{b: bufPool.Get().(*[]byte)}
		}
	}
	if size > 0 {
		p.tree = make(chan *pbuf, pipelineBuffers)
		p.wg.Add(1)
		go p.runTree(size)
	}
	return p
}

// runTree is the hashing goroutine: it encodes the stream's first size
// bytes and keeps the result when the stream had exactly that many.
func (p *pipeline) runTree(size int64) {
	defer p.wg.Done()
	feed := &treeFeed{ch: p.tree, release: p.recycle}
	ob, id, err := bao.Encode(feed, size)
	if extra := feed.drain(); err == nil && extra == 0 {
		p.ob, p.id = ob, id
	}
}

// treeFeed reads the buffers sent to the hashing goroutine, recycling each
// one once it was read.
type treeFeed struct {
	ch      <-chan *pbuf
	cur     *pbuf
	off     int
	release func(*pbuf)
}

func (f *treeFeed) Read(b []byte) (int, error) {
	for f.cur == nil || f.off == f.cur.n {
		if f.cur != nil {
			f.release(f.cur)
			f.cur = nil
		}
		pb, ok := <-f.ch
		if !ok {
			return 0, io.EOF
		}
		f.cur, f.off = pb, 0
	}
	n := copy(b, (*f.cur.b)[f.off:f.cur.n])
	f.off += n
	return n, nil
}

// drain releases every buffer not read yet and returns their byte count.
func (f *treeFeed) drain() int64 {
	var left int64
	if f.cur != nil {
		left += int64(f.cur.n - f.off)
		f.release(f.cur)
		f.cur = nil
	}
	for pb := range f.ch {
		left += int64(pb.n)
		f.release(pb)
	}
	return left
}

// next returns an empty buffer of at most limit bytes; total is the number
// of bytes read so far.
func (p *pipeline) next(limit, total int64) *pbuf {
	if p.keep {
		b := make([]byte, min(limit, ReadSize, max(ChunkSize, total)))
		return &pbuf{b: &b}
	}
	return <-p.free
}

// pump reads r until EOF and feeds the hasher and sink.
func (p *pipeline) pump(ctx context.Context, r io.Reader, maxBytes int64, sink func([]byte) error) (int64, error) {
	var total int64
	for {
		if err := ctx.Err(); err != nil {
			return total, err
		}
		limit := int64(ReadSize)
		if maxBytes > 0 {
			limit = min(limit, maxBytes+1-total)
		}
		pb := p.next(limit, total)
		n, rerr := io.ReadFull(r, (*pb.b)[:min(limit, int64(len(*pb.b)))])
		total += int64(n)
		eof := errors.Is(rerr, io.EOF) || errors.Is(rerr, io.ErrUnexpectedEOF)
		if rerr != nil && !eof {
			p.recycle(pb)
			return total, fmt.Errorf("store: read body: %w", rerr)
		}
		if maxBytes > 0 && total > maxBytes {
			p.recycle(pb)
			return total, ErrTooLarge
		}
		if err := p.feed(pb, n, sink); err != nil || eof {
			return total, err
		}
	}
}

// feed hands the first n bytes of pb to the hasher, which recycles it once
// read, then to sink; with nothing hashing it recycles pb itself. A
// recycled buffer is taken again only by the next read, after sink
// returned.
func (p *pipeline) feed(pb *pbuf, n int, sink func([]byte) error) error {
	if n == 0 {
		p.recycle(pb)
		return nil
	}
	pb.n = n
	if p.tree != nil {
		p.tree <- pb
		return sink((*pb.b)[:n])
	}
	err := sink((*pb.b)[:n])
	p.recycle(pb)
	return err
}

// recycle returns a buffer to the free list (kept buffers are the sink's).
// The free list has room for every buffer, so this never blocks.
func (p *pipeline) recycle(pb *pbuf) {
	if !p.keep {
		p.free <- pb
	}
}

// finish stops the hasher, waits for it and returns its result (nil when
// it did not finish the stream, or abort: nothing will be stored).
func (p *pipeline) finish(abort bool) (bao.Outboard, ID) {
	if p.tree != nil {
		close(p.tree)
	}
	p.wg.Wait()
	if !p.keep {
		for range pipelineBuffers {
			bufPool.Put((<-p.free).b)
		}
	}
	if abort {
		return nil, ID{}
	}
	return p.ob, p.id
}
