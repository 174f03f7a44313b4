package store

import (
	"context"
	"fmt"
	"io"
	"sync"
	"sync/atomic"

	"github.com/zeebo/blake3"
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
	// Keep means the sink retains the buffers it is given: Ingest then
	// allocates a fresh buffer per read instead of recycling pooled ones.
	// Buffers then start at ChunkSize and double up to ReadSize; every
	// buffer except the last is a multiple of ChunkSize long.
	Keep bool
}

// Ingested is the result of a successful Ingest.
type Ingested struct {
	ID     ID
	Chunks []ID
	Size   int64
}

// Ingest reads r to EOF in reads of at most ReadSize bytes, hands every
// buffer to sink (on the calling goroutine) and, concurrently, to two hashing
// goroutines: one computes the whole-object digest, the other the chunk
// digests. The buffers are shared, never copied. Without Keep, sink must
// not retain its argument. The context is checked between reads. Errors:
// the context's error, ErrTooLarge, sink's error, or the reader's error
// wrapped with %w. Both goroutines have ended when Ingest returns.
func Ingest(ctx context.Context, r io.Reader, opt IngestOptions, sink func([]byte) error) (Ingested, error) {
	p := newPipeline(opt.Keep)
	size, err := p.pump(ctx, r, opt.MaxBytes, sink)
	id, chunks := p.finish(err != nil)
	if err != nil {
		return Ingested{}, err
	}
	return Ingested{ID: id, Chunks: chunks, Size: size}, nil
}

// pbuf is a buffer shared by the sink and the two hashers.
type pbuf struct {
	b    *[]byte
	n    int
	refs atomic.Int32
}

type pipeline struct {
	keep         bool
	whole, chunk chan *pbuf
	free         chan *pbuf
	abort        atomic.Bool
	wg           sync.WaitGroup
	wholeSum     ID
	chunkSums    []ID
}

func newPipeline(keep bool) *pipeline {
	p := &pipeline{keep: keep, whole: make(chan *pbuf, pipelineBuffers), chunk: make(chan *pbuf, pipelineBuffers)}
	if !keep {
		p.free = make(chan *pbuf, pipelineBuffers)
		for range pipelineBuffers {
			p.free <- &pbuf{b: bufPool.Get().(*[]byte)}
		}
	}
	p.wg.Add(2)
	go p.runWhole()
	go p.runChunks()
	return p
}

func (p *pipeline) runWhole() {
	defer p.wg.Done()
	h := blake3.New()
	for pb := range p.whole {
		if !p.abort.Load() {
			h.Write((*pb.b)[:pb.n])
		}
		p.release(pb)
	}
	h.Sum(p.wholeSum[:0])
}

func (p *pipeline) runChunks() {
	defer p.wg.Done()
	var c chunker
	for pb := range p.chunk {
		if !p.abort.Load() {
			c.write((*pb.b)[:pb.n])
		}
		p.release(pb)
	}
	p.chunkSums = c.sums()
}

// release drops one hasher's reference; the last one recycles the buffer.
// free has room for every buffer, so this never blocks.
func (p *pipeline) release(pb *pbuf) {
	if pb.refs.Add(-1) == 0 && !p.keep {
		p.free <- pb
	}
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

// pump reads r until EOF and feeds the hashers and sink.
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
		eof := rerr == io.EOF || rerr == io.ErrUnexpectedEOF
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

// feed hands the first n bytes of pb to both hashers, then to sink.
func (p *pipeline) feed(pb *pbuf, n int, sink func([]byte) error) error {
	if n == 0 {
		p.recycle(pb)
		return nil
	}
	pb.n = n
	pb.refs.Store(2)
	p.whole <- pb
	p.chunk <- pb
	return sink((*pb.b)[:n])
}

// recycle returns a buffer that was never handed to the hashers.
func (p *pipeline) recycle(pb *pbuf) {
	if !p.keep {
		p.free <- pb
	}
}

// finish stops the hashers, waits for them and returns their results.
// With abort set, queued buffers are released without hashing.
func (p *pipeline) finish(abort bool) (ID, []ID) {
	p.abort.Store(abort)
	close(p.whole)
	close(p.chunk)
	p.wg.Wait()
	if !p.keep {
		for range pipelineBuffers {
			bufPool.Put((<-p.free).b)
		}
	}
	return p.wholeSum, p.chunkSums
}
