package runtime

import (
	"context"
	"errors"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/VictoriaMetrics/metrics"
)

// slowStop is a node part whose Stop takes d (its own bound) whatever its
// ctx says, as the admin plane's stop does.
type slowStop struct {
	*fakeRole
	d time.Duration
}

func (s slowStop) Stop(ctx context.Context) error {
	s.rec.add("stop:" + s.name)
	time.Sleep(s.d)
	return nil
}

// TestManagerPartsRunBesideRoles: parts start and stop in their place
// among the roles; status, readiness, Apply and the gauges see only roles;
// a part's Start error comes back as it is, a role's names the role.
func TestManagerPartsRunBesideRoles(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		m := testManager(metrics.NewSet(), time.Second)
		admin := newFake("admin", rec)
		admin.ready = Readiness{Missing: []string{"admin"}} // would make the node unready were it a role
		m.AddPart(admin, time.Second)
		addAll(m, rec, "index", "storage")
		m.AddPart(newFake("readiness", rec), time.Second)
		if err := m.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		if got := prefixed(rec.get(), "start:"); !slices.Equal(got, []string{"admin", "index", "storage", "readiness"}) {
			t.Fatalf("start order %v", got)
		}
		var names []string
		for _, s := range m.Status() {
			names = append(names, s.Name)
		}
		if !slices.Equal(names, []string{"index", "storage"}) {
			t.Fatalf("status lists %v, want the roles only", names)
		}
		if rd := m.Readiness(context.Background()); !rd.Ready() {
			t.Fatalf("a part's readiness counted: %+v", rd)
		}
		done := make(chan error)
		go func() { done <- m.Run(context.Background()) }() // Manager.Run, owned by this test
		synctest.Wait()
		m.RequestShutdown("test")
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if got := prefixed(rec.get(), "stop:"); !slices.Equal(got, []string{"readiness", "storage", "index", "admin"}) {
			t.Fatalf("stop order %v", got)
		}
		if got := prefixed(rec.get(), "drain:"); !slices.Equal(got, []string{"storage", "index"}) {
			t.Fatalf("drained %v, want the roles only", got)
		}
	})
}

func TestManagerPartStartErrorIsNotWrapped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		m := testManager(metrics.NewSet(), time.Second)
		admin := newFake("admin", rec)
		admin.startErr = errors.New("admin: listen 127.0.0.1:1: address in use")
		m.AddPart(admin, time.Second)
		if err := m.Start(context.Background()); err == nil || err.Error() != admin.startErr.Error() {
			t.Fatalf("Start = %v, want the part's error as it is", err)
		}
		m2 := testManager(metrics.NewSet(), time.Second)
		r := newFake("storage", rec)
		r.startErr = errors.New("disk")
		m2.Add(r, "")
		if err := m2.Start(context.Background()); err == nil || err.Error() != "role storage: start: disk" {
			t.Fatalf("Start = %v, want the role named", err)
		}
	})
}

// TestManagerPartStopHasItsOwnBound: a part stopped after the roles have
// used the whole drain deadline still gets its own bound, and is not
// abandoned.
func TestManagerPartStopHasItsOwnBound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		set := metrics.NewSet()
		m := testManager(set, time.Second)
		m.AddPart(slowStop{newFake("admin", rec), 900 * time.Millisecond}, time.Second)
		slow := newFake("storage", rec)
		slow.stopBlock = make(chan struct{})
		m.Add(slow, "")
		if err := m.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		done := make(chan error)
		go func() { done <- m.Run(context.Background()) }() // Manager.Run, owned by this test
		synctest.Wait()
		m.RequestShutdown("test")
		time.Sleep(time.Second + stopGrace + time.Millisecond) // storage was abandoned at the drain deadline + grace
		close(slow.stopBlock)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if v := metric(t, set, `ron_tasks_aborted_total{role="storage",kind="role_stop"}`); v != 1 {
			t.Fatalf("the role was not abandoned at the deadline: %v", v)
		}
		if _, ok := scrape(t, set)[`ron_tasks_aborted_total{role="admin",kind="role_stop"}`]; ok {
			t.Fatal("the part was abandoned: it did not get its own bound")
		}
		if got := prefixed(rec.get(), "stop:"); !slices.Equal(got, []string{"storage", "admin"}) {
			t.Fatalf("stop order %v", got)
		}
	})
}
