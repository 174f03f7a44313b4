package tenant

import (
	"errors"
	"math"
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ronhq/ron/httpx"
)

func fixed(p Params) ParamsFunc { return func(ID) Params { return p } }

func newStates(t *testing.T, max int, fn ParamsFunc) *States {
	t.Helper()
	s, err := NewStates(Options{MaxStates: max, Params: fn})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// admit acquires id, takes a token and releases it.
func admit(t *testing.T, s *States, id ID) error {
	t.Helper()
	st, err := s.Acquire(id)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Release(st)
	return s.Allow(st)
}

func wantStatus(t *testing.T, err error, status int) *httpx.Error {
	t.Helper()
	var he *httpx.Error
	if !errors.As(err, &he) || he.Status != status {
		t.Fatalf("err = %v, want status %d", err, status)
	}
	return he
}

func TestNewStatesBadOptions(t *testing.T) {
	cases := []Options{{MaxStates: 0, Params: fixed(Params{})}, {MaxStates: -1, Params: fixed(Params{})}, {MaxStates: 1}}
	for _, o := range cases {
		if _, err := NewStates(o); !errors.Is(err, ErrOptions) {
			t.Errorf("NewStates(%+v) = %v, want ErrOptions", o, err)
		}
	}
	s := newStates(t, 1, fixed(Params{RPS: 1, Weight: 1}))
	if err := s.SetParams(nil); !errors.Is(err, ErrOptions) {
		t.Fatalf("SetParams(nil) = %v", err)
	}
}

func TestBucketRefill(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newStates(t, 4, fixed(Params{RPS: 2, Weight: 1})) // burst 0 → 2
		for range 2 {
			if err := admit(t, s, "acme"); err != nil {
				t.Fatal(err)
			}
		}
		he := wantStatus(t, admit(t, s, "acme"), http.StatusTooManyRequests)
		if he.Code != httpx.CodeRateLimited || he.RetryAfter != 1 || he.Details["limit"] != "tenant_rps" {
			t.Fatalf("got %+v", he)
		}
		if err := admit(t, s, "other"); err != nil {
			t.Fatalf("other tenant limited: %v", err)
		}
		time.Sleep(500 * time.Millisecond)
		if err := admit(t, s, "acme"); err != nil {
			t.Fatalf("after refill: %v", err)
		}
		wantStatus(t, admit(t, s, "acme"), http.StatusTooManyRequests)
	})
}

func TestRetryAfterRoundsUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newStates(t, 1, fixed(Params{RPS: 0.4, Weight: 1})) // 2.5 s per token
		if err := admit(t, s, "slow"); err != nil {
			t.Fatal(err)
		}
		if he := wantStatus(t, admit(t, s, "slow"), 429); he.RetryAfter != 3 {
			t.Fatalf("Retry-After %d, want 3", he.RetryAfter)
		}
		time.Sleep(2 * time.Second)
		if he := wantStatus(t, admit(t, s, "slow"), 429); he.RetryAfter != 1 {
			t.Fatalf("Retry-After %d, want 1", he.RetryAfter)
		}
	})
}

func TestSuspendedAndInvalid(t *testing.T) {
	s := newStates(t, 2, func(id ID) Params {
		if id == "bad" {
			return Params{RPS: math.NaN(), Weight: 1}
		}
		return Params{RPS: 0, Weight: 1}
	})
	he := wantStatus(t, admit(t, s, "gone"), http.StatusForbidden)
	if he.Code != httpx.CodeForbidden || he.Details["reason"] != "tenant_suspended" {
		t.Fatalf("got %+v", he)
	}
	wantStatus(t, admit(t, s, "bad"), http.StatusInternalServerError)
}

func TestEvictsIdleLRUFirst(t *testing.T) {
	s := newStates(t, 2, fixed(Params{RPS: 1, Weight: 1}))
	if err := admit(t, s, "a"); err != nil {
		t.Fatal(err)
	}
	held, err := s.Acquire("b")
	if err != nil {
		t.Fatal(err)
	}
	wantStatus(t, admit(t, s, "a"), 429)     // a is empty and most recent
	if err := admit(t, s, "c"); err != nil { // evicts a (b is held)
		t.Fatal(err)
	}
	if s.Len() != 2 {
		t.Fatalf("Len = %d", s.Len())
	}
	if err := s.Allow(held); err != nil { // b survived with its token
		t.Fatal(err)
	}
	st, err := s.Acquire("d") // evicts c, the only idle entry
	if err != nil {
		t.Fatal(err)
	}
	he := wantStatus(t, func() error { _, err := s.Acquire("e"); return err }(), http.StatusServiceUnavailable)
	if he.Code != httpx.CodeBusy || he.Details["limit"] != "tenant_states" || he.RetryAfter != 1 {
		t.Fatalf("got %+v", he)
	}
	s.Release(st)
	s.Release(held)
	s.Release(held)                          // extra release ignored
	if err := admit(t, s, "a"); err != nil { // a came back full
		t.Fatalf("evicted bucket not full: %v", err)
	}
}

func TestSetParamsLive(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newStates(t, 4, fixed(Params{RPS: 1, Burst: 1, Weight: 1}))
		if err := admit(t, s, "acme"); err != nil {
			t.Fatal(err)
		}
		wantStatus(t, admit(t, s, "acme"), 429)
		if err := s.SetParams(fixed(Params{RPS: 0, Weight: 1})); err != nil {
			t.Fatal(err)
		}
		wantStatus(t, admit(t, s, "acme"), http.StatusForbidden)
		if err := s.SetParams(fixed(Params{RPS: 10, Burst: 5, Weight: 3})); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second)
		for i := range 5 {
			if err := admit(t, s, "acme"); err != nil {
				t.Fatalf("request %d: %v", i, err)
			}
		}
		wantStatus(t, admit(t, s, "acme"), 429)
		st, _ := s.Acquire("new")
		defer s.Release(st)
		if st.ID() != "new" || st.Params().Weight != 3 {
			t.Fatalf("new tenant params %+v", st.Params())
		}
	})
}

func TestStatesConcurrent(t *testing.T) {
	s := newStates(t, 3, fixed(Params{RPS: 1000, Weight: 1}))
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for j := range 50 {
				id := ID([]string{"a", "b", "c", "d", "e"}[(i+j)%5])
				st, err := s.Acquire(id)
				if err != nil {
					continue
				}
				_ = s.Allow(st)
				s.Release(st)
			}
		})
		if i == 4 {
			_ = s.SetParams(fixed(Params{RPS: 500, Weight: 2}))
		}
	}
	wg.Wait()
	if n := s.Len(); n > 3 {
		t.Fatalf("Len = %d over max", n)
	}
}
