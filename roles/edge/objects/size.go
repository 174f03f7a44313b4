package objects

import (
	"context"
	"sync"

	"github.com/ronhq/ron/httpx/ranges"
	"github.com/ronhq/ron/roles/edge/fillq"
	"github.com/ronhq/ron/store/verified/vfetch"
)

// sizeProof is one proof of a flight's size, shared by every answer that
// needs it: the first starts it, all wait for its outcome.
type sizeProof struct {
	mu      sync.Mutex
	started bool
	done    chan struct{} // closed once err is set
	err     error         // nil, or the answer's *httpx.Error
}

// begin reports whether the caller is the first: it then starts the proof.
func (p *sizeProof) begin() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	first := !p.started
	p.started = true
	return first
}

// settle sets the outcome. It is called exactly once, for the starter: by
// the proof's job, by its Dropped, or on a refused Submit.
func (p *sizeProof) settle(err error) {
	p.err = err
	close(p.done)
}

// proveFill returns nil once the size of fl's fill may be stated by plan's
// answer: at once when the answer reads the last group itself or the size
// is proven (o.sizes: the fill records it as soon as it verified the last
// group); else after the flight's one proof — a job on the work queue that
// reads the last group from the fill's source — waiting within ctx. A
// failed proof is the source's failure: 502 (etag_invalid for a mismatch,
// counted), 504 for a timeout; the fill itself goes on and fails at its last
// group if the size was false.
func (o *Objects) proveFill(ctx context.Context, fl *flight, plan ranges.Plan) error {
	if !vfetch.StatesUnproven(plan, fl.probe.tree) {
		return nil
	}
	if proven, _ := o.sizes.Check(fl.probe.tree); proven {
		return nil
	}
	if fl.proof.begin() {
		o.submitProof(fl)
	}
	select {
	case <-fl.proof.done:
		return fl.proof.err
	case <-ctx.Done():
		return ctxError(ctx)
	}
}

// submitProof queues the job proving fl's size; a refusal (queue full,
// shutdown) is the proof's outcome.
func (o *Objects) submitProof(fl *flight) {
	job := fillq.Job{Kind: "fill", Deadline: fl.retryDeadline(),
		Run: func(ctx context.Context) {
			var herr error
			if err := fl.probe.proveSize(ctx); err != nil {
				herr = o.afterBytes(ctx, fl.src, fl.id, err)
			}
			fl.proof.settle(herr)
		},
		Dropped: func(err error) { fl.proof.settle(submitError(err)) }}
	if err := o.opt.Queue.Submit(job); err != nil {
		fl.proof.settle(o.refused(err))
	}
}
