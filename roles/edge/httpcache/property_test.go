package httpcache

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"testing"
	"time"
)

// randomHeader builds a response header mixing valid and invalid caching
// fields around t0.
func randomHeader(r *rand.Rand) http.Header {
	h := http.Header{}
	pick := func(options ...string) string { return options[r.IntN(len(options))] }
	offset := func() string { return httpDate(float64(r.IntN(200000) - 100000)) }
	if r.IntN(3) > 0 {
		h.Set("Cache-Control", pick("max-age=0", "max-age=60", "max-age=abc", "s-maxage=5, max-age=100", "no-cache",
			"max-age=1, stale-while-revalidate=30", "must-revalidate, max-age=10", "public", "max-age=99999999999", "max-age =5"))
	}
	if r.IntN(3) == 0 {
		h.Set("CDN-Cache-Control", pick("max-age=30", "max-age=\"30\"", "no-cache", "private"))
	}
	if r.IntN(2) == 0 {
		h.Set("Date", pick(offset(), "foo"))
	}
	if r.IntN(2) == 0 {
		h.Set("Expires", pick(offset(), "0"))
	}
	if r.IntN(2) == 0 {
		h.Set("Last-Modified", offset())
	}
	if r.IntN(2) == 0 {
		h.Set("Age", pick(fmt.Sprint(r.IntN(100000)), "abc", "-5", "2147483648"))
	}
	if r.IntN(2) == 0 {
		h.Set("ETag", pick(`"a"`, `W/"a"`, "a"))
	}
	return h
}

// randomStored stores a random response exchanged around t0.
func randomStored(r *rand.Rand) *Stored {
	reqT := at(float64(r.IntN(100)))
	rsp := Response{Status: []int{200, 203, 404, 500, 599}[r.IntN(5)], Header: randomHeader(r), ContentLength: -1,
		RequestTime: reqT, ResponseTime: reqT.Add(time.Duration(r.IntN(5000)) * time.Millisecond)}
	st := NewStored(getReq(nil), rsp)
	st.Invalidated = r.IntN(10) == 0
	return st
}

func TestPropertyAgeNeverNegative(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 5000 {
		st := randomStored(r)
		now := at(float64(r.IntN(400000) - 200000))
		if age := CurrentAge(st.Header, st.RequestTime, st.ResponseTime, now); age < 0 {
			t.Fatalf("RFC9111 4.2.3: negative age %v for %v at %v", age, st.Header, now)
		}
		if lt := Lifetime(st.Status, st.Header, st.ResponseTime, DefaultPolicy()); lt < 0 {
			t.Fatalf("RFC9111 4.2.1: negative lifetime %v", lt)
		}
	}
}

func TestPropertyAgeMonotonic(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 2000 {
		st := randomStored(r)
		a := at(float64(r.IntN(100000)))
		b := a.Add(time.Duration(r.IntN(100000)) * time.Millisecond)
		if CurrentAge(st.Header, st.RequestTime, st.ResponseTime, b) < CurrentAge(st.Header, st.RequestTime, st.ResponseTime, a) {
			t.Fatal("RFC9111 4.2.3: age decreased as time passed")
		}
	}
}

func TestPropertyDecisions(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	reqCC := []string{"", "no-cache", "max-age=10", "min-fresh=20", "max-stale", "max-stale=50", "only-if-cached"}
	for range 5000 {
		st := randomStored(r)
		now := at(float64(r.IntN(200000)))
		h := http.Header{}
		if cc := reqCC[r.IntN(len(reqCC))]; cc != "" {
			h.Set("Cache-Control", cc)
		}
		d := Decide(getReq(h), st, now, DefaultPolicy())
		switch d.Action {
		case ServeFresh:
			if !(d.Lifetime > d.Age) || st.Invalidated {
				t.Fatalf("fresh with lifetime %v age %v invalidated %v", d.Lifetime, d.Age, st.Invalidated)
			}
		case ServeStale:
			if st.Invalidated || staleForbidden(mustEffective(st)) {
				t.Fatalf("RFC9111 4.2.4: stale served despite %v", st.Header)
			}
		case GatewayTimeout:
			if !RequestDirectives(h).Has("only-if-cached") {
				t.Fatal("504 without only-if-cached")
			}
		}
		if d.Action == ServeFresh && RequestDirectives(h).Has("no-cache") {
			t.Fatal("RFC9111 5.2.1.4: served without validation despite request no-cache")
		}
	}
}

func mustEffective(st *Stored) Directives {
	d, _ := Effective(st.Header)
	return d
}

func TestPropertyUpdatesDoNotMutate(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for range 1000 {
		st := randomStored(r)
		before := st.Clone()
		rsp := Response{Status: 304, Header: randomHeader(r), ContentLength: -1, RequestTime: at(500), ResponseTime: at(501)}
		if n, ok := Update304(st, rsp); ok && (n == st || !n.ResponseTime.Equal(at(501))) {
			t.Fatal("Update304 returned its input or kept old times")
		}
		rsp.Status = 200
		FreshenFromHead(Request{Method: http.MethodHead, Header: http.Header{}}, st, rsp)
		if fmt.Sprint(before) != fmt.Sprint(st) {
			t.Fatalf("input modified:\n%v\n%v", before, st)
		}
	}
}
