package tenants

import (
	"context"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/ronhq/ron/httpx/client"
	"github.com/ronhq/ron/roles/registry/registryapi"
	"github.com/ronhq/ron/roles/registry/registrytest"
)

// waitLimit bounds each wait for the real registry and followers.
const waitLimit = registrytest.Wait

// runningFollower is a follower running against the real registry.
type runningFollower struct {
	name   string
	tables chan *Table
	cancel context.CancelFunc
	done   chan error
}

func runFollower(t *testing.T, name string, opt FollowerOptions) *runningFollower {
	rf := &runningFollower{name: name, tables: make(chan *Table, 64), done: make(chan error, 1)}
	opt.Defaults, opt.Log = defs, zerolog.Nop()
	opt.Apply = func(tb *Table) { rf.tables <- tb }
	f := NewFollower(opt)
	ctx, cancel := context.WithCancel(context.Background())
	rf.cancel = cancel
	go func() { rf.done <- f.Run(ctx) }() // the role's task
	t.Cleanup(rf.stop)
	return rf
}

func (rf *runningFollower) stop() {
	if rf.cancel != nil {
		rf.cancel()
		<-rf.done
		rf.cancel = nil
	}
}

// waitVersion returns the first table of registry version v, failing on a
// newer one or after waitLimit.
func (rf *runningFollower) waitVersion(t *testing.T, v uint64) *Table {
	t.Helper()
	timeout := time.NewTimer(waitLimit)
	defer timeout.Stop()
	for {
		select {
		case tb := <-rf.tables:
			switch {
			case !tb.FromRegistry() || tb.Version() < v:
				continue
			case tb.Version() > v:
				t.Fatalf("%s: version %d applied, want %d", rf.name, tb.Version(), v)
			}
			return tb
		case <-timeout.C:
			t.Fatalf("%s: version %d not applied within %s", rf.name, v, waitLimit)
		}
	}
}

// TestFollowerWithRealRegistry follows a real in-process registry three
// ways: LocalClient.Watch, HTTPClient.Watch over its listener, and the
// bus with LocalClient reads.
func TestFollowerWithRealRegistry(t *testing.T) {
	rr := registrytest.Start(t)
	hc := registryapi.NewHTTPClient("http://"+rr.Role.Addr(), nil, client.Options{Timeout: 5 * time.Second})
	defer hc.Close()
	config := []Item{{ID: "acme", RPS: 1, Weight: 1}}
	followers := []*runningFollower{
		runFollower(t, "local", FollowerOptions{Client: rr.Local, Config: config}),
		runFollower(t, "http", FollowerOptions{Client: hc, Config: config}),
		runFollower(t, "bus", FollowerOptions{Client: rr.Local, Bus: rr.Bus, Config: config}),
	}
	for _, rf := range followers {
		if tb := rf.waitVersion(t, 0); tb.Params("acme").RPS != 1 {
			t.Fatalf("%s: genesis table %+v", rf.name, tb.Params("acme"))
		}
	}
	c := rr.Commit(tenantItem("acme", 200, 400, 2, 1<<20), tenantItem("anon:1.2.3.0/24", 1, 1, 1, 0))
	for _, rf := range followers {
		tb := rf.waitVersion(t, c.Version)
		if got := tb.Params("acme"); got.RPS != 200 || got.Burst != 400 || got.Weight != 2 || got.MaxBytesPerS != 1<<20 {
			t.Fatalf("%s: acme %+v", rf.name, got)
		}
		if tb.Params("anon:1.2.3.0/24") != defs.Anon {
			t.Fatalf("%s: anon item applied", rf.name)
		}
	}
	c = rr.Commit(tenantItem("beta", 0, 0, 1, 0)) // acme gone: config again
	for _, rf := range followers {
		tb := rf.waitVersion(t, c.Version)
		if tb.Params("acme").RPS != 1 || !tb.Params("beta").Suspended() {
			t.Fatalf("%s: acme %+v beta %+v", rf.name, tb.Params("acme"), tb.Params("beta"))
		}
	}
	for _, rf := range followers {
		rf.stop()
	}
}
