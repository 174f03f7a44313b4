package runtime

import (
	"sync"

	"github.com/VictoriaMetrics/metrics"
)

// subscriberBuffer is the per-subscriber bound of docs/architecture.md §3.
const subscriberBuffer = 1024

// Event is a message on the Bus. Kind is a stable snake_case name for logs.
type Event interface{ Kind() string }

// ConfigUpdated: a new config snapshot was stored.
type ConfigUpdated struct{ Version uint64 }

// ServiceCrashed: a supervised worker ("role/task") failed or panicked.
type ServiceCrashed struct{ Service, Reason string }

// RegistryUpdated: the registry committed a descriptor set.
type RegistryUpdated struct {
	Version uint64
	B3      string
}

// Shutdown: the node started its shutdown sequence.
type Shutdown struct{}

// Kind implements Event.
func (ConfigUpdated) Kind() string { return "config_updated" }

// Kind implements Event.
func (ServiceCrashed) Kind() string { return "service_crashed" }

// Kind implements Event.
func (RegistryUpdated) Kind() string { return "registry_updated" }

// Kind implements Event.
func (Shutdown) Kind() string { return "shutdown" }

// Bus is an in-process broadcast. Each subscriber has its own buffer of
// 1024 events; when it is full the oldest event is dropped and counted in
// ron_bus_lagged_total{role="node",subscriber}. Publish never blocks.
type Bus struct {
	m *Metrics

	mu   sync.Mutex
	subs map[*Subscription]struct{}
}

// NewBus returns a bus with no subscribers; m may be nil.
func NewBus(m *Metrics) *Bus {
	return &Bus{m: m.orNew(), subs: map[*Subscription]struct{}{}}
}

// Subscription is one subscriber's view of the bus.
type Subscription struct {
	bus    *Bus
	ch     chan Event
	lagged *metrics.Counter

	mu     sync.Mutex // serialises delivery (evict+send) and Close
	closed bool
}

// Subscribe registers a subscriber; name labels its lag counter. Events
// published after Subscribe returns are delivered in publish order (per
// publisher), minus those dropped for lag.
func (b *Bus) Subscribe(name string) *Subscription {
	s := &Subscription{
		bus:    b,
		ch:     make(chan Event, subscriberBuffer),
		lagged: b.m.Counter("bus_lagged_total", "role", "node", "subscriber", name),
	}
	b.mu.Lock()
	b.subs[s] = struct{}{}
	b.mu.Unlock()
	return s
}

// Publish delivers ev to every current subscriber without blocking.
func (b *Bus) Publish(ev Event) {
	b.mu.Lock()
	subs := make([]*Subscription, 0, len(b.subs))
	for s := range b.subs {
		subs = append(subs, s)
	}
	b.mu.Unlock()
	for _, s := range subs {
		s.deliver(ev)
	}
}

// deliver sends ev, evicting the oldest buffered event when full. Both
// channel operations are non-blocking, so holding mu is safe.
func (s *Subscription) deliver(ev Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for !s.closed {
		select {
		case s.ch <- ev:
			return
		default:
		}
		select {
		case <-s.ch:
			s.lagged.Inc()
		default:
		}
	}
}

// C returns the event channel; it is closed by Close.
func (s *Subscription) C() <-chan Event { return s.ch }

// Close unsubscribes and closes C. Idempotent.
func (s *Subscription) Close() {
	s.bus.mu.Lock()
	delete(s.bus.subs, s)
	s.bus.mu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		s.closed = true
		close(s.ch)
	}
}
