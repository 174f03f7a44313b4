package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestBadFlags: every malformed command line exits 2 without output.
func TestBadFlags(t *testing.T) {
	fo := func(extra ...string) []string {
		return append([]string{"failover", "-admin", "127.0.0.1:1,127.0.0.1:2,127.0.0.1:3",
			"-index", "http://a,http://b,http://c", "-pid", "10,11,12", "-token", "t"}, extra...)
	}
	cases := []struct {
		name string
		args []string
	}{
		{"no subcommand", nil},
		{"unknown subcommand", []string{"bench"}},
		{"leader without admin", []string{"leader"}},
		{"leader admin url", []string{"leader", "-admin", "http://x:1"}},
		{"leader too many", []string{"leader", "-admin", strings.Repeat("127.0.0.1:1,", 7) + "127.0.0.1:1"}},
		{"leader zero timeout", []string{"leader", "-admin", "127.0.0.1:1", "-timeout", "0s"}},
		{"leader slow every", []string{"leader", "-admin", "127.0.0.1:1", "-every", "2s"}},
		{"leader extra argument", []string{"leader", "-admin", "127.0.0.1:1", "x"}},
		{"failover two servers", []string{"failover", "-admin", "127.0.0.1:1,127.0.0.1:2", "-index", "http://a,http://b", "-pid", "10,11", "-token", "t"}},
		{"failover index count", append(fo()[:5], "-index", "http://a,http://b", "-pid", "10,11,12", "-token", "t")},
		{"failover bad pid", append(fo()[:7], "-pid", "10,x,12", "-token", "t")},
		{"failover pid 1", append(fo()[:7], "-pid", "1,2,3", "-token", "t")},
		{"failover without token", fo()[:7]},
		{"failover bad name", fo("-name", "Upper")},
		{"failover negative run", fo("-run", "-1")},
		{"failover long timeout", fo("-timeout", "2m")},
		{"failover long pause", fo("-pause", "2s")},
		{"failover zero warmup", fo("-warmup", "0s")},
		{"failover zero limit", fo("-limit", "0s")},
		{"cas without url", []string{"cas", "-token", "t"}},
		{"cas bad url", []string{"cas", "-url", "ftp://x", "-token", "t"}},
		{"cas without token", []string{"cas", "-url", "http://x"}},
		{"cas zero c", []string{"cas", "-url", "http://x", "-token", "t", "-c", "0"}},
		{"cas zero duration", []string{"cas", "-url", "http://x", "-token", "t", "-duration", "0s"}},
		{"cas bad prefix", []string{"cas", "-url", "http://x", "-token", "t", "-prefix", "a_b"}},
		{"cas negative pause", []string{"cas", "-url", "http://x", "-token", "t", "-pause", "-1s"}},
		{"unknown flag", []string{"cas", "-url", "http://x", "-token", "t", "-bogus"}},
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

// three is a healthy group of n1, n2, n3 led by leader, each at applied.
func three(leader string, applied ...uint64) []cpStatus {
	var sts []cpStatus
	for i, id := range []string{"n1", "n2", "n3"} {
		st := cpStatus{ID: id, State: "follower", Leader: leader, Applied: applied[i]}
		if id == leader {
			st.State = "leader"
		}
		for _, s := range []string{"n1", "n2", "n3"} {
			st.Servers = append(st.Servers, cpServer{ID: s, Voter: true, Leader: s == leader, Gossip: "alive"})
		}
		sts = append(sts, st)
	}
	return sts
}

// TestAgreed: the leader condition of cpbench leader.
func TestAgreed(t *testing.T) {
	admins := []string{"a:1", "a:2", "a:3"}
	ok := three("n2", 5, 5, 5)
	res, err := agreed(admins, ok, true)
	if err != nil || res.Leader != "n2" || res.LeaderPos != 1 || res.LeaderAdmin != "a:2" {
		t.Fatalf("healthy group: %+v, %v", res, err)
	}
	bad := map[string]func([]cpStatus){
		"a node names another leader": func(s []cpStatus) { s[2].Leader = "n1" },
		"a node knows no leader":      func(s []cpStatus) { s[0].Leader = "" },
		"the leader is a candidate":   func(s []cpStatus) { s[1].State = "candidate" },
		"the leader is not a node":    func(s []cpStatus) { s[0].Leader, s[1].Leader, s[2].Leader = "n9", "n9", "n9" },
		"a server is dead in gossip":  func(s []cpStatus) { s[0].Servers[2].Gossip = "dead" },
		"a server is a non-voter":     func(s []cpStatus) { s[2].Servers[0].Voter = false },
		"a server is missing":         func(s []cpStatus) { s[1].Servers = s[1].Servers[:2] },
		"duplicate ids":               func(s []cpStatus) { s[2].ID = "n1" },
		"a follower is behind":        func(s []cpStatus) { s[0].Applied = 4 },
	}
	for name, spoil := range bad {
		t.Run(name, func(t *testing.T) {
			sts := three("n2", 5, 5, 5)
			spoil(sts)
			if _, err := agreed(admins, sts, true); err == nil {
				t.Error("agreed")
			}
		})
	}
	behind := three("n2", 4, 5, 5)
	if _, err := agreed(admins, behind, false); err != nil {
		t.Errorf("without -caught-up a follower behind is fine: %v", err)
	}
}

// TestWaitLeaderPolls: waitLeader retries until the group agrees, and
// gives up with the last disagreement.
func TestWaitLeaderPolls(t *testing.T) {
	var polls atomic.Int32
	fetch := func(_ context.Context, admin string) (cpStatus, error) {
		n := polls.Add(1)
		sts := three("n3", 1, 1, 1)
		i := int(admin[len(admin)-1] - '1')
		if n < 9 {
			sts[i].Leader = ""
		}
		return sts[i], nil
	}
	cfg := leaderConfig{admins: []string{"a:1", "a:2", "a:3"}, timeout: 5 * time.Second, every: time.Millisecond}
	res, err := waitLeader(t.Context(), cfg, fetch)
	if err != nil || res.Leader != "n3" || res.Polls < 3 {
		t.Fatalf("%+v, %v", res, err)
	}
	never := func(context.Context, string) (cpStatus, error) { return cpStatus{}, fmt.Errorf("refused") }
	cfg.timeout = 20 * time.Millisecond
	if _, err := waitLeader(t.Context(), cfg, never); err == nil || !strings.Contains(err.Error(), "refused") {
		t.Errorf("want the last error, got %v", err)
	}
}

// fakeGroup is three nodes' status and index: before the kill n1 leads;
// from the kill until elect has passed, writes through a follower are
// refused (503 no_quorum with Retry-After: 1) and no node names a leader;
// then n2 leads and writes succeed.
type fakeGroup struct {
	elect time.Duration

	mu      sync.Mutex
	killed  time.Time
	killPID int
	version int
	puts    int
}

func (g *fakeGroup) phase() (killed, elected bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.killed.IsZero() {
		return false, false
	}
	return true, time.Since(g.killed) >= g.elect
}

func (g *fakeGroup) kill(pid int) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.killed, g.killPID = time.Now(), pid
	return nil
}

func (g *fakeGroup) status(_ context.Context, admin string) (cpStatus, error) {
	i := int(admin[len(admin)-1] - '1')
	killed, elected := g.phase()
	switch {
	case !killed:
		return three("n1", 3, 3, 3)[i], nil
	case i == 0:
		return cpStatus{}, fmt.Errorf("connection refused")
	case elected:
		return three("n2", 9, 9, 9)[i], nil
	}
	st := three("n1", 3, 3, 3)[i]
	st.Leader, st.State = "", "candidate"
	return st, nil
}

func (g *fakeGroup) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if r.Method != http.MethodPut || r.URL.Path != "/names/fo" || r.Header.Get("Authorization") != "Bearer tok" ||
		!bytes.HasPrefix(body, []byte(`{"b3":"b3:`)) {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	if killed, elected := g.phase(); killed && !elected {
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = io.WriteString(w, `{"error":{"code":"no_quorum","message":"x","details":{"outcome":"not_written"}}}`)
		return
	}
	g.mu.Lock()
	g.version++
	g.puts++
	v := g.version
	g.mu.Unlock()
	_, _ = fmt.Fprintf(w, `{"name":"fo","b3":"b3:00","version":%d}`, v)
}

// TestFailover: the kill goes to the leader's pid, the writes go through
// a follower, and the failover time spans the refused period.
func TestFailover(t *testing.T) {
	for _, honor := range []bool{false, true} {
		t.Run(fmt.Sprintf("honor-retry-after=%t", honor), func(t *testing.T) {
			g := &fakeGroup{elect: 150 * time.Millisecond}
			srv := httptest.NewServer(g)
			defer srv.Close()
			cfg := failoverConfig{admins: []string{"a:1", "a:2", "a:3"}, indexes: []string{srv.URL, srv.URL, srv.URL},
				pids: []int{101, 102, 103}, token: "tok", name: "fo", run: 1, timeout: time.Second, pause: 5 * time.Millisecond,
				honor: honor, warmup: 50 * time.Millisecond, limit: 10 * time.Second, every: 5 * time.Millisecond}
			res, err := failover(t.Context(), cfg, g.status, srv.Client(), g.kill)
			if err != nil {
				t.Fatal(err)
			}
			if g.killPID != 101 || res.OldLeader != "n1" || res.Writer != "n3" || res.NewLeader != "n2" {
				t.Errorf("killed %d; %+v", g.killPID, res)
			}
			low, high := 150.0, 1000.0
			if honor {
				low, high = 1000, 3000 // the first refusal's Retry-After: 1 is waited out
			}
			if res.FailoverMs < low || res.FailoverMs > high {
				t.Errorf("failover %.0f ms, want %.0f–%.0f", res.FailoverMs, low, high)
			}
			// (with honor the one refusal may be of the write in flight at
			// the kill, which counts before it)
			if !honor && res.Failures["503 no_quorum not_written"] < 1 || res.BeforeKill < 1 || res.Version < 2 {
				t.Errorf("%+v", res)
			}
			if res.ElectedMs < 100 || res.ElectedMs > res.FailoverMs+50 || res.LeaderLostMs < 0 || res.LeaderLostMs > res.ElectedMs {
				t.Errorf("phases: lost %.0f, elected %.0f, failover %.0f", res.LeaderLostMs, res.ElectedMs, res.FailoverMs)
			}
		})
	}
}

// TestFailoverNoAck: nothing acknowledged after the kill fails the run.
func TestFailoverNoAck(t *testing.T) {
	g := &fakeGroup{elect: time.Hour}
	srv := httptest.NewServer(g)
	defer srv.Close()
	cfg := failoverConfig{admins: []string{"a:1", "a:2", "a:3"}, indexes: []string{srv.URL, srv.URL, srv.URL},
		pids: []int{101, 102, 103}, token: "tok", name: "fo", timeout: time.Second, pause: 5 * time.Millisecond,
		warmup: 20 * time.Millisecond, limit: 100 * time.Millisecond, every: 5 * time.Millisecond}
	if _, err := failover(t.Context(), cfg, g.status, srv.Client(), g.kill); err == nil || !strings.Contains(err.Error(), "no write acknowledged") {
		t.Errorf("got %v", err)
	}
}

// fakeIndex is a one-node name store with the CAS preconditions of
// docs/index.md §3. lose makes it apply every lose-th write and then answer
// 503 (a write whose answer was lost).
type fakeIndex struct {
	lose int

	mu       sync.Mutex
	versions map[string]int
	writes   int
	bad      []string
}

func (f *fakeIndex) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	name := strings.TrimPrefix(r.URL.Path, "/names/")
	f.mu.Lock()
	defer f.mu.Unlock()
	cur := f.versions[name]
	if r.Method == http.MethodGet {
		if r.URL.Query().Get("consistent") != "1" {
			f.bad = append(f.bad, "read without consistent=1")
		}
		if cur == 0 {
			http.Error(w, "{}", http.StatusNotFound)
			return
		}
		_, _ = fmt.Fprintf(w, `{"name":%q,"version":%d}`, name, cur)
		return
	}
	im, inm := r.Header.Get("If-Match"), r.Header.Get("If-None-Match")
	ok := false
	switch {
	case im != "" && inm != "" || im == "" && inm == "":
		f.bad = append(f.bad, "a write that is not one compare-and-swap")
	case inm == "*":
		ok = cur == 0
	default:
		v, err := strconv.Atoi(strings.Trim(im, `"`))
		ok = err == nil && v == cur
	}
	if !ok {
		w.WriteHeader(http.StatusPreconditionFailed)
		cv := "null"
		if cur > 0 {
			cv = strconv.Itoa(cur)
		}
		_, _ = fmt.Fprintf(w, `{"error":{"code":"precondition_failed","details":{"current_version":%s}}}`, cv)
		return
	}
	f.versions[name] = cur + 1
	f.writes++
	if f.lose > 0 && f.writes%f.lose == 0 {
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = io.WriteString(w, `{"error":{"code":"no_quorum","details":{"outcome":"unknown"}}}`)
		return
	}
	w.Header().Set("ETag", `"`+strconv.Itoa(cur+1)+`"`)
	_, _ = fmt.Fprintf(w, `{"name":%q,"version":%d}`, name, cur+1)
}

// TestCAS: every write is a compare-and-swap on the version the writer
// last got, acknowledged ones are counted, and a write whose answer was
// lost is recovered from (a consistent read), not miscounted.
func TestCAS(t *testing.T) {
	for _, lose := range []int{0, 7} {
		t.Run(fmt.Sprintf("lose=%d", lose), func(t *testing.T) {
			f := &fakeIndex{lose: lose, versions: map[string]int{}}
			a, b := httptest.NewServer(f), httptest.NewServer(f)
			defer a.Close()
			defer b.Close()
			cfg := casConfig{urls: []string{a.URL, b.URL}, token: "tok", c: 4, duration: 200 * time.Millisecond,
				prefix: "t", timeout: time.Second, pause: time.Millisecond}
			res, err := casLoad(t.Context(), cfg, &http.Client{Timeout: time.Second})
			if err != nil {
				t.Fatal(err)
			}
			f.mu.Lock()
			defer f.mu.Unlock()
			if len(f.bad) > 0 {
				t.Errorf("bad requests: %v", f.bad[:min(3, len(f.bad))])
			}
			if len(f.versions) != 4 {
				t.Errorf("names written: %v", f.versions)
			}
			lost := 0
			if lose > 0 {
				lost = f.writes / lose
			}
			if res.Acked != f.writes-lost || res.Acked == 0 {
				t.Errorf("acked %d, the store applied %d of which %d answers were lost", res.Acked, f.writes, lost)
			}
			if res.Failures["503 no_quorum unknown"] != lost || res.Failures["412 precondition_failed"] != 0 {
				t.Errorf("failures %v, want %d lost answers and no 412 (the writer re-reads)", res.Failures, lost)
			}
			if res.P50Ms <= 0 || res.P99Ms < res.P50Ms || res.MaxMs < res.P99Ms {
				t.Errorf("latencies %+v", res)
			}
		})
	}
}

// TestRunPrintsJSON: a whole cas command through run.
func TestRunPrintsJSON(t *testing.T) {
	f := &fakeIndex{versions: map[string]int{}}
	srv := httptest.NewServer(f)
	defer srv.Close()
	var out, errw bytes.Buffer
	code := run([]string{"cas", "-url", srv.URL, "-token", "t", "-c", "2", "-duration", "50ms"}, &out, &errw)
	var res casResult
	if code != 0 || json.Unmarshal(out.Bytes(), &res) != nil || res.Acked == 0 || res.Writers != 2 {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out.String(), errw.String())
	}
}

// TestKinds: failure names.
func TestKinds(t *testing.T) {
	for _, tc := range []struct {
		status int
		body   string
		want   string
	}{
		{503, `{"error":{"code":"no_quorum","details":{"outcome":"unknown"}}}`, "503 no_quorum unknown"},
		{503, `{"error":{"code":"upstream_unavailable","message":"upstream circuit open"}}`, "503 upstream_unavailable"},
		{502, `bad gateway`, "502"},
	} {
		if got := refusalKind(tc.status, []byte(tc.body)); got != tc.want {
			t.Errorf("refusalKind(%d, %s) = %q, want %q", tc.status, tc.body, got, tc.want)
		}
	}
	if got := transportKind(context.DeadlineExceeded); got != "client_timeout" {
		t.Errorf("deadline: %q", got)
	}
	if got := transportKind(fmt.Errorf("dial tcp: connect: connection refused")); got != "refused" {
		t.Errorf("refused: %q", got)
	}
	for name, want := range map[string]bool{"a": true, "fo-1": true, "-a": false, "a-": false, "A": false, "a.b": false, "": false,
		strings.Repeat("a", 64): false} {
		if validName(name) != want {
			t.Errorf("validName(%q) != %t", name, want)
		}
	}
}
