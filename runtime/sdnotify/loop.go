package sdnotify

import (
	"context"
	"fmt"
	"time"

	"github.com/ronhq/ron/runtime"
)

// loop is the worker: the one writer of notifications and of a.st.
func (a *Agent) loop(ctx context.Context) error {
	var pollC <-chan time.Time
	if !a.st.ready && !a.st.stopping {
		poll := time.NewTicker(a.opt.PollInterval)
		defer poll.Stop()
		pollC = poll.C
		a.checkReady(ctx)
	}
	var dogC <-chan time.Time
	if a.opt.Watchdog > 0 {
		dog := time.NewTicker(a.opt.Watchdog / 2)
		defer dog.Stop()
		dogC = dog.C
	}
	var events <-chan runtime.Event
	if a.sub != nil {
		events = a.sub.C()
	}
	for {
		if a.st.ready || a.st.stopping {
			pollC = nil
		}
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-events:
			if !ok {
				events = nil
			} else if _, is := ev.(runtime.Shutdown); is {
				a.stopping(ctx)
			}
		case r := <-a.reqs:
			a.handle(ctx, r)
		case <-pollC:
			a.checkReady(ctx)
		case <-dogC:
			a.send(ctx, MsgWatchdog)
		}
	}
}

// checkReady asks for readiness once: READY=1 when ready, else a STATUS=
// line when what is missing changed.
func (a *Agent) checkReady(ctx context.Context) {
	rctx, cancel := context.WithTimeout(ctx, readyTimeout)
	rd := a.opt.Ready(rctx)
	cancel()
	if a.st.stopping || a.st.ready {
		return
	}
	if rd.Ready() {
		a.st.ready = a.send(ctx, MsgReady+"\nSTATUS=ready") // a lost READY=1 is retried at the next poll
		return
	}
	if s := waitingStatus(rd); s != a.st.lastStatus {
		a.st.lastStatus = s
		a.send(ctx, "STATUS="+s)
	}
}

// stopping sends STOPPING=1 once.
func (a *Agent) stopping(ctx context.Context) {
	if a.st.stopping {
		return
	}
	a.st.stopping = true
	a.send(ctx, MsgStopping+"\nSTATUS=shutting down: draining")
}

// handle runs a requested readiness check or a reload's begin or end.
// Reloads before the first READY=1 or after STOPPING=1 send nothing.
func (a *Agent) handle(ctx context.Context, r request) {
	switch r.kind {
	case checkNow:
		a.checkReady(ctx)
	case reloadBegin:
		a.reloadBegan(ctx, r)
	case reloadEnd:
		a.reloadEnded(ctx, r)
	}
}

// reloadBegan sends RELOADING=1 for the first of overlapping reloads.
func (a *Agent) reloadBegan(ctx context.Context, r request) {
	if !a.st.ready || a.st.stopping {
		return
	}
	a.st.reloads++
	if a.st.reloads > 1 {
		return
	}
	msg := MsgReloading + "\n"
	if r.monoUsec > 0 {
		msg += fmt.Sprintf("MONOTONIC_USEC=%d\n", r.monoUsec)
	}
	a.send(ctx, msg+"STATUS=reloading configuration")
}

// reloadEnded sends READY=1 when the last open reload ends.
func (a *Agent) reloadEnded(ctx context.Context, r request) {
	if a.st.reloads == 0 {
		return
	}
	a.st.reloads--
	if a.st.reloads > 0 || a.st.stopping {
		return
	}
	status := fmt.Sprintf("ready; config v%d loaded", r.version)
	if r.err != nil {
		status = "ready; reload refused: " + oneLine(r.err.Error())
	}
	a.send(ctx, MsgReady+"\nSTATUS="+status)
}

// send delivers msg under sendTimeout and reports whether it did; a send
// under way finishes even when Stop cancels ctx (STOPPING=1 is not lost).
// The first failure in a row is logged as a warning, the rest at debug level.
func (a *Agent) send(ctx context.Context, msg string) bool {
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), sendTimeout)
	defer cancel()
	err := a.opt.Sender.Send(sctx, msg)
	if err == nil {
		a.st.failing = false
		return true
	}
	ev := a.opt.Log.Debug()
	if !a.st.failing {
		ev = a.opt.Log.Warn()
	}
	a.st.failing = true
	ev.Err(err).Msg("sd_notify failed")
	return false
}
