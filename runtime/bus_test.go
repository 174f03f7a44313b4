package runtime

import (
	"testing"

	"github.com/VictoriaMetrics/metrics"
)

func TestBusBroadcast(t *testing.T) {
	b := NewBus(nil)
	s1, s2 := b.Subscribe("a"), b.Subscribe("b")
	defer s1.Close()
	b.Publish(ConfigUpdated{Version: 2})
	b.Publish(RegistryUpdated{Version: 9, B3: "b3:00"})
	for _, s := range []*Subscription{s1, s2} {
		if ev := <-s.C(); ev != (ConfigUpdated{Version: 2}) {
			t.Fatalf("first event %#v", ev)
		}
		if ev := <-s.C(); ev.Kind() != "registry_updated" {
			t.Fatalf("second event %#v", ev)
		}
	}
	s2.Close()
	s2.Close() // idempotent
	if _, ok := <-s2.C(); ok {
		t.Fatal("closed subscription delivered")
	}
	b.Publish(Shutdown{}) // no panic on a closed subscriber
	if ev := <-s1.C(); ev.Kind() != "shutdown" {
		t.Fatalf("got %#v", ev)
	}
}

func TestBusLagDropsOldest(t *testing.T) {
	set := metrics.NewSet()
	b := NewBus(NewMetrics(set))
	s := b.Subscribe("slow")
	defer s.Close()
	for i := range subscriberBuffer + 10 {
		b.Publish(ConfigUpdated{Version: uint64(i)}) // never blocks
	}
	if v := metric(t, set, `ron_bus_lagged_total{role="node",subscriber="slow"}`); v != 10 {
		t.Fatalf("lagged = %v, want 10", v)
	}
	if ev := (<-s.C()).(ConfigUpdated); ev.Version != 10 {
		t.Fatalf("oldest kept = %d, want 10", ev.Version)
	}
	if len(s.C()) != subscriberBuffer-1 {
		t.Fatalf("buffer holds %d", len(s.C()))
	}
	if (ServiceCrashed{}).Kind() != "service_crashed" {
		t.Fatal("kind")
	}
}
