package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestBadFlags: every malformed command line exits 2 without running.
func TestBadFlags(t *testing.T) {
	cases := []struct {
		name string
		args []string
	}{
		{"no subcommand", nil},
		{"unknown subcommand", []string{"bench"}},
		{"writes without url", []string{"writes", "-token", "t"}},
		{"writes bad url", []string{"writes", "-url", "ftp://x", "-token", "t"}},
		{"writes without token", []string{"writes", "-url", "http://x"}},
		{"writes tiny size", []string{"writes", "-url", "http://x", "-token", "t", "-size", "8"}},
		{"writes huge size", []string{"writes", "-url", "http://x", "-token", "t", "-size", "1GiB"}},
		{"writes bad size", []string{"writes", "-url", "http://x", "-token", "t", "-size", "1MB"}},
		{"writes zero n", []string{"writes", "-url", "http://x", "-token", "t", "-n", "0"}},
		{"writes zero c", []string{"writes", "-url", "http://x", "-token", "t", "-c", "0"}},
		{"writes copies 6", []string{"writes", "-url", "http://x", "-token", "t", "-copies", "6"}},
		{"writes zero timeout", []string{"writes", "-url", "http://x", "-token", "t", "-timeout", "0s"}},
		{"writes extra argument", []string{"writes", "-url", "http://x", "-token", "t", "more"}},
		{"rate without metrics", []string{"rate"}},
		{"rate fast every", []string{"rate", "-metrics", "http://x/metrics", "-every", "1ms"}},
		{"rate idle below every", []string{"rate", "-metrics", "http://x/metrics", "-every", "2s", "-idle", "1s"}},
		{"rate timeout below idle", []string{"rate", "-metrics", "http://x/metrics", "-idle", "5s", "-timeout", "5s"}},
		{"converge without admin", []string{"converge", "-since", "1"}},
		{"converge admin url", []string{"converge", "-admin", "http://x:1", "-since", "1"}},
		{"converge without since", []string{"converge", "-admin", "127.0.0.1:1"}},
		{"converge bad since", []string{"converge", "-admin", "127.0.0.1:1", "-since", "yesterday"}},
		{"converge negative since", []string{"converge", "-admin", "127.0.0.1:1", "-since", "-5"}},
		{"converge slow every", []string{"converge", "-admin", "127.0.0.1:1", "-since", "1", "-every", "2s"}},
		{"unknown flag", []string{"rate", "-metrics", "http://x/metrics", "-bogus"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var out, errw bytes.Buffer
			if code := run(tc.args, &out, &errw); code != 2 || out.Len() != 0 {
				t.Errorf("exit %d, stdout %q, stderr %q; want 2 and no output", code, out.String(), errw.String())
			}
		})
	}
}

// fakeStorage answers POST /o like a cluster storage node and records the
// bodies' first 16 bytes.
type fakeStorage struct {
	mu     sync.Mutex
	stamps map[string]int
	copies int
}

func (f *fakeStorage) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if r.Method != http.MethodPost || r.URL.Path != "/o" || r.Header.Get("Authorization") != "Bearer tok" || len(body) < 16 {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	f.stamps[string(body[:16])]++
	f.mu.Unlock()
	w.WriteHeader(http.StatusCreated)
	fmt.Fprintf(w, `{"cid":"b3:00","size":%d,"created":true,"copies":%d}`, len(body), f.copies)
}

// TestWrites: n distinct objects reach the servers round-robin and the
// summary counts them.
func TestWrites(t *testing.T) {
	fa, fb := &fakeStorage{stamps: map[string]int{}, copies: 2}, &fakeStorage{stamps: map[string]int{}, copies: 2}
	a, b := httptest.NewServer(fa), httptest.NewServer(fb)
	defer a.Close()
	defer b.Close()
	var out, errw bytes.Buffer
	code := run([]string{"writes", "-url", a.URL + "," + b.URL + "/", "-token", "tok", "-size", "1KiB", "-n", "20", "-c", "3", "-copies", "2"}, &out, &errw)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errw.String())
	}
	var res writesResult
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatal(err)
	}
	if res.Count != 20 || res.Size != 1024 || res.Workers != 3 || res.ObjectsPerS <= 0 || res.P50Ms > res.MaxMs {
		t.Errorf("summary %+v", res)
	}
	if len(fa.stamps) != 10 || len(fb.stamps) != 10 {
		t.Errorf("distinct objects per server: %d, %d; want 10 each", len(fa.stamps), len(fb.stamps))
	}
}

// TestWritesFailures: a reply without the required copies, or a refused
// write, fails the run (exit 1).
func TestWritesFailures(t *testing.T) {
	one := httptest.NewServer(&fakeStorage{stamps: map[string]int{}, copies: 1})
	defer one.Close()
	refuse := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, `{"error":{"code":"upstream_unavailable"}}`, http.StatusServiceUnavailable)
	}))
	defer refuse.Close()
	for _, u := range []string{one.URL, refuse.URL} {
		var out, errw bytes.Buffer
		if code := run([]string{"writes", "-url", u, "-token", "tok", "-size", "64", "-n", "3", "-copies", "2"}, &out, &errw); code != 1 {
			t.Errorf("%s: exit %d, want 1 (stderr %q)", u, code, errw.String())
		}
	}
}

// TestCheckReply covers the reply checks.
func TestCheckReply(t *testing.T) {
	cases := []struct {
		status int
		body   string
		copies int
		ok     bool
	}{
		{201, `{"cid":"b3:00","copies":2}`, 2, true},
		{200, `{"cid":"b3:00"}`, 0, true},
		{200, `{"cid":"b3:00"}`, 2, false},
		{201, `{"cid":"b3:00","copies":1}`, 2, false},
		{503, `{"cid":"b3:00","copies":2}`, 2, false},
		{201, `not json`, 0, false},
		{201, `{}`, 0, false},
	}
	for _, tc := range cases {
		if err := checkReply(tc.status, []byte(tc.body), tc.copies); (err == nil) != tc.ok {
			t.Errorf("checkReply(%d, %s, %d) = %v, want ok %t", tc.status, tc.body, tc.copies, err, tc.ok)
		}
	}
}

// TestSeriesSum reads the executed-bytes series and ignores others.
func TestSeriesSum(t *testing.T) {
	page := strings.Join([]string{
		`# HELP ron_repair_bytes_total repair bytes`,
		`ron_repair_bytes_total{phase="executed",role="storage"} 1.5e+06`,
		`ron_repair_bytes_total{phase="planned",role="storage"} 9e+09`,
		`ron_repair_bytes_totally{phase="executed"} 7`,
		`ron_repair_wait_seconds_count{role="storage"} 3`,
	}, "\n")
	if v, err := seriesSum([]byte(page), rateSeries, rateLabel); err != nil || v != 1.5e6 {
		t.Errorf("seriesSum = %v, %v; want 1.5e6", v, err)
	}
	if v, err := seriesSum([]byte("up 1\n"), rateSeries, rateLabel); err != nil || v != 0 {
		t.Errorf("absent series = %v, %v; want 0", v, err)
	}
	if _, err := seriesSum([]byte(`ron_repair_bytes_total{phase="executed"} x`), rateSeries, rateLabel); err == nil {
		t.Error("a malformed value was accepted")
	}
}

// TestNodeRates: the active period's intervals without the partial edges.
func TestNodeRates(t *testing.T) {
	s := []sample{{0, 0}, {time.Second, 0}, {2 * time.Second, 5}, {3 * time.Second, 15}, {4 * time.Second, 25},
		{5 * time.Second, 33}, {6 * time.Second, 36}, {7 * time.Second, 36}}
	nr := nodeRates("u", s)
	if nr.Bytes != 36 || nr.Intervals != 3 || nr.MedianBps != 10 || nr.ActiveS != 5 {
		t.Errorf("nodeRates = %+v", nr)
	}
	if got := nodeRates("u", []sample{{0, 4}, {time.Second, 4}}); got.Intervals != 0 || got.MedianBps != 0 {
		t.Errorf("idle node: %+v", got)
	}
	if q := quantile([]float64{4, 1, 3, 2}, 0.5); q != 2.5 {
		t.Errorf("quantile = %v", q)
	}
}

// TestRunRate: under synctest, a counter that rises for 5 s then stops is
// summarised once it stayed idle; one that never rises times out.
func TestRunRate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		fetch := func(_ context.Context, url string) (float64, error) {
			el := time.Since(start)
			if url == "http://b/metrics" {
				return 0, nil
			}
			return float64(min(el, 5*time.Second) / time.Second * 100), nil
		}
		cfg := rateConfig{metrics: []string{"http://a/metrics", "http://b/metrics"}, every: time.Second, idle: 3 * time.Second, timeout: time.Minute}
		res, err := runRate(context.Background(), cfg, fetch)
		if err != nil {
			t.Fatal(err)
		}
		if res.TimedOut || res.Nodes[0].Bytes != 500 || res.Nodes[0].MedianBps != 100 || res.Nodes[1].Bytes != 0 {
			t.Errorf("result %+v", res)
		}
		if took := time.Since(start); took != 8*time.Second {
			t.Errorf("stopped after %s, want 8s (last move at 5s + idle 3s)", took)
		}
		idle := rateConfig{metrics: cfg.metrics[1:], every: time.Second, idle: 2 * time.Second, timeout: 10 * time.Second}
		if _, err = runRate(context.Background(), idle, fetch); err == nil {
			t.Error("a counter that never moved did not fail")
		}
		idle.quiet = true
		t0 := time.Now()
		if res, err := runRate(context.Background(), idle, fetch); err != nil || time.Since(t0) != 2*time.Second || res.Nodes[0].Bytes != 0 {
			t.Errorf("-quiet on an idle node: %+v, %v after %s; want a result after -idle (2s)", res, err, time.Since(t0))
		}
	})
}

// TestConverge: under synctest, the poll that first sees every member
// alive everywhere ends the wait; a cluster that never converges times out
// with what it last saw.
func TestConverge(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		admins := []string{"a:1", "b:1", "c:1"}
		fetch := func(_ context.Context, admin string) (map[string]string, error) {
			if time.Since(start) < 100*time.Millisecond && admin == "b:1" {
				return map[string]string{"a": "alive", "b": "alive", "c": "dead"}, nil
			}
			return map[string]string{"a": "alive", "b": "alive", "c": "alive"}, nil
		}
		cfg := convergeConfig{admins: admins, since: start.Add(-time.Second), timeout: time.Second, every: 20 * time.Millisecond}
		res, err := converge(context.Background(), cfg, fetch)
		if err != nil {
			t.Fatal(err)
		}
		if res.Members != 3 || res.Ms != 1100 || res.Polls != 6 {
			t.Errorf("result %+v", res)
		}
		cfg.admins = append(cfg.admins, "d:1")
		if _, err := converge(context.Background(), cfg, fetch); err == nil || !strings.Contains(err.Error(), "sees") {
			t.Errorf("a missing member did not time out with what was seen: %v", err)
		}
	})
}

// TestStatusMembers reads cluster.members from a status document.
func TestStatusMembers(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/v1/status" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprint(w, `{"ready":true,"cluster":{"node_id":"n1","members":[{"id":"n1","state":"alive"},{"id":"n2","state":"dead"}]}}`)
	}))
	defer srv.Close()
	bare := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, `{"ready":true}`) }))
	defer bare.Close()
	fetch := statusMembers(srv.Client())
	got, err := fetch(context.Background(), strings.TrimPrefix(srv.URL, "http://"))
	if err != nil || got["n1"] != "alive" || got["n2"] != "dead" || len(got) != 2 {
		t.Errorf("members = %v, %v", got, err)
	}
	if _, err := fetch(context.Background(), strings.TrimPrefix(bare.URL, "http://")); err == nil {
		t.Error("a status without cluster was accepted")
	}
}
