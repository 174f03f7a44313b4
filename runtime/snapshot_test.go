package runtime

import (
	"sync"
	"testing"
)

func TestSnapshot(t *testing.T) {
	type cfg struct{ N int }
	s := NewSnapshot(&cfg{N: 1})
	if s.Load().N != 1 || s.Version() != 1 {
		t.Fatal("initial")
	}
	if v := s.Store(&cfg{N: 2}); v != 2 || s.Load().N != 2 {
		t.Fatalf("Store = %d", v)
	}
	var wg sync.WaitGroup
	seen := make(chan uint64, 100)
	for i := range 100 {
		wg.Go(func() { seen <- s.Store(&cfg{N: i}) }) // writer i, owned by this test
	}
	wg.Go(func() { // reader, owned by this test
		for range 1000 {
			c, v := s.LoadVersion()
			if c == nil || v < 2 {
				t.Error("torn read")
			}
		}
	})
	wg.Wait()
	close(seen)
	distinct := map[uint64]bool{}
	for v := range seen {
		distinct[v] = true
	}
	if len(distinct) != 100 || s.Version() != 102 {
		t.Fatalf("versions: %d distinct, final %d", len(distinct), s.Version())
	}
}
