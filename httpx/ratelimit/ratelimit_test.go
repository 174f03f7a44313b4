package ratelimit

import (
	"errors"
	"math"
	"strconv"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestBadOptions(t *testing.T) {
	cases := []struct {
		name string
		opt  Options
	}{
		{"zero rate", Options{Burst: 1}},
		{"negative rate", Options{RPS: -1, Burst: 1}},
		{"NaN rate", Options{RPS: math.NaN(), Burst: 1}},
		{"infinite rate", Options{RPS: math.Inf(1), Burst: 1}},
		{"zero burst", Options{RPS: 1}},
		{"negative burst", Options{RPS: 1, Burst: -1}},
		{"negative keys", Options{RPS: 1, Burst: 1, MaxKeys: -1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, err := New(c.opt); !errors.Is(err, ErrConfig) {
				t.Fatalf("New(%+v) = %v, want ErrConfig", c.opt, err)
			}
		})
	}
	l, err := New(Options{RPS: 1, Burst: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.SetRate(0, 1); !errors.Is(err, ErrConfig) {
		t.Fatalf("SetRate(0, 1) = %v", err)
	}
}

func TestBucketPerKeyWithRetryAfter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l, err := New(Options{RPS: 2, Burst: 3})
		if err != nil {
			t.Fatal(err)
		}
		for i := range 3 {
			if ok, _ := l.Allow("a"); !ok {
				t.Fatalf("token %d refused", i)
			}
		}
		ok, wait := l.Allow("a")
		if ok || wait != 500*time.Millisecond {
			t.Fatalf("empty bucket: %v, retry after %v; want refused, 500ms", ok, wait)
		}
		if ok, _ := l.Allow("b"); !ok {
			t.Fatal("another key shares the bucket")
		}
		time.Sleep(wait)
		if ok, _ := l.Allow("a"); !ok {
			t.Fatal("token not refilled after Retry-After")
		}
	})
}

func TestKeysBounded(t *testing.T) {
	l, err := New(Options{RPS: 1, Burst: 1, MaxKeys: 4})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 100 {
		l.Allow(strconv.Itoa(i))
	}
	if l.Len() != 4 {
		t.Fatalf("%d buckets, want 4", l.Len())
	}
}

func TestSetRateAppliesToExistingBuckets(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l, _ := New(Options{RPS: 1, Burst: 1})
		l.Allow("a")
		if ok, wait := l.Allow("a"); ok || wait != time.Second {
			t.Fatalf("got %v %v", ok, wait)
		}
		if err := l.SetRate(10, 5); err != nil {
			t.Fatal(err)
		}
		if ok, wait := l.Allow("a"); ok || wait != 100*time.Millisecond {
			t.Fatalf("after SetRate: %v %v, want refused with 100ms", ok, wait)
		}
		time.Sleep(500 * time.Millisecond)
		for i := range 5 {
			if ok, _ := l.Allow("a"); !ok {
				t.Fatalf("token %d of the new burst refused", i)
			}
		}
	})
}
