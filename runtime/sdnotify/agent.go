package sdnotify

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/ronhq/ron/runtime"
)

// The protocol's assignments ron sends (sd_notify(3)).
const (
	MsgReady     = "READY=1"
	MsgReloading = "RELOADING=1"
	MsgStopping  = "STOPPING=1"
	MsgWatchdog  = "WATCHDOG=1"
)

// DefaultPollInterval is how often an Agent asks for readiness until the
// node is first ready.
const DefaultPollInterval = 250 * time.Millisecond

const (
	sendTimeout  = time.Second     // one datagram, or one hand-over to the loop
	readyTimeout = 2 * time.Second // one readiness check
	requestSlots = 16              // pending requests for the worker
)

// StopTimeout bounds Agent.Stop's wait for its worker.
const StopTimeout = time.Second

// Options configures an Agent.
type Options struct {
	// Sender receives the notifications; nil makes New return nil (no
	// systemd, nothing to do).
	Sender Sender
	// Watchdog is $WATCHDOG_USEC (Env.Watchdog); WATCHDOG=1 is sent every
	// Watchdog/2. 0: no keep-alives.
	Watchdog time.Duration
	// Ready is the node's readiness (what /readyz answers). It is polled
	// every PollInterval until it first reports ready; READY=1 follows.
	Ready func(ctx context.Context) runtime.Readiness
	// PollInterval overrides DefaultPollInterval.
	PollInterval time.Duration
	// Bus delivers runtime.Shutdown (step 1 of the shutdown sequence), on
	// which STOPPING=1 is sent. nil: no STOPPING=1.
	Bus     *runtime.Bus
	Log     zerolog.Logger
	Metrics *runtime.Metrics // for the agent's task group (role "node"); nil: private
}

// Agent turns a node's lifecycle into notifications, all sent by one
// worker ("sdnotify", in a task group of role "node") in this order of
// rules: READY=1 once, when Ready first reports ready after Start (with
// STATUS= lines naming what is missing until then); RELOADING=1 with
// MONOTONIC_USEC= when a reload begins and READY=1 when it ends (only after
// the first READY=1); STOPPING=1 on the bus's Shutdown event, after which
// neither READY=1 nor RELOADING=1 is sent again; WATCHDOG=1 every
// Watchdog/2 from Start to Stop.
//
// All methods of a nil *Agent are no-ops.
type Agent struct {
	opt   Options
	group *runtime.TaskGroup
	reqs  chan request  // reload notifications for the worker
	done  chan struct{} // closed by Stop
	sub   *runtime.Subscription

	startOnce, stopOnce sync.Once

	st loopState // owned by the worker (restarts run one at a time)
}

// loopState is what the worker has told systemd so far.
type loopState struct {
	ready      bool   // the start's READY=1 was sent
	stopping   bool   // STOPPING=1 was sent
	reloads    int    // reloads begun and not yet ended
	lastStatus string // the last STATUS= while waiting for readiness
	failing    bool   // the last send failed (logged once until one succeeds)
}

// request is work for the worker: a readiness check, or a reload's begin
// or end.
type request struct {
	kind     requestKind
	monoUsec uint64 // reloadBegin
	version  uint64 // reloadEnd
	err      error  // reloadEnd
}

type requestKind int

const (
	checkNow requestKind = iota
	reloadBegin
	reloadEnd
)

// New returns an Agent for o, or nil when o.Sender is nil. It starts
// nothing: call Start, then Stop.
func New(o Options) *Agent {
	if o.Sender == nil {
		return nil
	}
	if o.PollInterval <= 0 {
		o.PollInterval = DefaultPollInterval
	}
	if o.Ready == nil {
		o.Ready = func(context.Context) runtime.Readiness { return runtime.Readiness{} }
	}
	return &Agent{
		opt:   o,
		group: runtime.NewTaskGroup("node", o.Log, o.Metrics),
		reqs:  make(chan request, requestSlots),
		done:  make(chan struct{}),
	}
}

// Start subscribes to the bus and starts the worker. Later calls do nothing.
func (a *Agent) Start() {
	if a == nil {
		return
	}
	a.startOnce.Do(func() {
		if a.opt.Bus != nil {
			a.sub = a.opt.Bus.Subscribe("sdnotify")
		}
		a.group.Go("sdnotify", a.loop)
	})
}

// Stop stops the worker (waiting at most 1 s), sends the STOPPING=1 of a
// Shutdown event the worker had not read yet, and unsubscribes. It is
// idempotent; reload notifications after Stop are dropped.
func (a *Agent) Stop() {
	if a == nil {
		return
	}
	a.stopOnce.Do(func() {
		close(a.done)
		ctx, cancel := context.WithTimeout(context.Background(), StopTimeout)
		defer cancel()
		if a.group.Stop(ctx) == 0 {
			a.flush(ctx) // the worker is gone: a.st is Stop's now
		}
		if a.sub != nil {
			a.sub.Close()
		}
	})
}

// CheckReady asks for a readiness check now rather than at the next poll:
// call it when the roles have started, so READY=1 follows without delay.
func (a *Agent) CheckReady() {
	if a == nil {
		return
	}
	a.enqueue(request{kind: checkNow})
}

// flush handles the bus events the worker left unread, so that a node
// stopping faster than the worker runs still sends STOPPING=1.
func (a *Agent) flush(ctx context.Context) {
	if a.sub == nil {
		return
	}
	for {
		select {
		case ev, ok := <-a.sub.C():
			if !ok {
				return
			}
			if _, is := ev.(runtime.Shutdown); is {
				a.stopping(ctx)
			}
		default:
			return
		}
	}
}

// Reloading tells systemd a reload has begun (RELOADING=1 with the
// current CLOCK_MONOTONIC as MONOTONIC_USEC, as systemd ≥ 253 expects).
// Call Reloaded when it ends, whatever its outcome.
func (a *Agent) Reloading() {
	if a == nil {
		return
	}
	a.enqueue(request{kind: reloadBegin, monoUsec: monotonicUsec()})
}

// Reloaded ends a reload begun with Reloading: READY=1, with a STATUS=
// naming the new config version or why the reload was refused.
func (a *Agent) Reloaded(version uint64, err error) {
	if a == nil {
		return
	}
	a.enqueue(request{kind: reloadEnd, version: version, err: err})
}

// enqueue hands r to the worker, waiting at most sendTimeout.
func (a *Agent) enqueue(r request) {
	t := time.NewTimer(sendTimeout)
	defer t.Stop()
	select {
	case a.reqs <- r:
	case <-a.done:
	case <-t.C:
		a.opt.Log.Warn().Int("kind", int(r.kind)).Msg("sd_notify: notification dropped (worker busy)")
	}
}

// oneLine flattens s for a STATUS= value.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// waitingStatus is the STATUS= text of a node not ready yet.
func waitingStatus(rd runtime.Readiness) string {
	var parts []string
	if len(rd.Missing) > 0 {
		parts = append(parts, "waiting for "+strings.Join(rd.Missing, ", "))
	}
	if len(rd.Degraded) > 0 {
		parts = append(parts, "degraded: "+strings.Join(rd.Degraded, ", "))
	}
	return fmt.Sprintf("starting; %s", strings.Join(parts, "; "))
}
