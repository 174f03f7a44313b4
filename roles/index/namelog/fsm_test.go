package namelog

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"go.uber.org/goleak"

	"github.com/ronhq/ron/roles/index/indexapi"
	"github.com/ronhq/ron/roles/index/indexdb"
	"github.com/ronhq/ron/runtime/consensus"
	"github.com/ronhq/ron/store"
	"github.com/ronhq/ron/store/kv/bolt"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// waitBound is the stated bound of every wait here (elections under
// ProfileLocal take a few hundred milliseconds).
const waitBound = 10 * time.Second

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitBound)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, waitBound)
		}
		<-tick.C
	}
}

// server is one index server of a test group: its raft node and database.
type server struct {
	id, dir, addr string
	g             *consensus.Group
	db            *indexdb.DB
	closeDB       func() error
}

// start opens s's index database and raft node from its dir.
func (s *server) start(t *testing.T) {
	t.Helper()
	kdb, err := bolt.Open(filepath.Join(s.dir, "index.db"), bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if s.db, err = indexdb.Open(context.Background(), kdb, time.Now); err != nil {
		t.Fatal(err)
	}
	s.closeDB = kdb.Close
	bind := s.addr
	if bind == "" {
		bind = "127.0.0.1:0"
	}
	s.g, err = consensus.Open(consensus.Options{ID: s.id, Dir: filepath.Join(s.dir, "raft"), Bind: bind,
		FSM: NewFSM(s.db, func(err error) { t.Errorf("%s: fatal: %v", s.id, err) }), Profile: consensus.ProfileLocal, Log: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	s.addr = s.g.Addr()
}

func (s *server) stop(t *testing.T) {
	t.Helper()
	if s.g == nil {
		return
	}
	if err := s.g.Close(); err != nil {
		t.Error(err)
	}
	if err := s.closeDB(); err != nil {
		t.Error(err)
	}
	s.g = nil
}

// newServers starts and bootstraps n servers.
func newServers(t *testing.T, n int) []*server {
	ss := make([]*server, n)
	var seen []consensus.Candidate
	for i := range ss {
		ss[i] = &server{id: fmt.Sprintf("s%d", i), dir: t.TempDir()}
		ss[i].start(t)
		seen = append(seen, consensus.Candidate{ID: ss[i].id, Addr: ss[i].addr})
	}
	t.Cleanup(func() {
		for _, s := range ss {
			s.stop(t)
		}
	})
	for _, s := range ss {
		set, _ := consensus.BootstrapSet(s.id, seen, n)
		if err := s.g.Bootstrap(set); err != nil {
			t.Fatal(err)
		}
	}
	return ss
}

func leader(t *testing.T, ss []*server) *server {
	t.Helper()
	var l *server
	eventually(t, "a leader", func() bool {
		for _, s := range ss {
			if s.g != nil && s.g.State() == "Leader" {
				l = s
				return true
			}
		}
		return false
	})
	return l
}

// write appends w through g and returns the applied Result.
func write(ctx context.Context, g *consensus.Group, w indexdb.NameWrite) (Result, error) {
	b, err := Encode(w)
	if err != nil {
		return Result{}, err
	}
	resp, err := g.Apply(ctx, b)
	if err != nil {
		return Result{}, err
	}
	return resp.(Result), nil
}

// TestCompareAndSwapIsDecidedByTheLog: eight writers race compare-and-swaps
// on one name through the leader. Every acknowledged swap took exactly the
// version it expected, no two took the same, and every server holds the
// same history, byte for byte, with the leader's times.
func TestCompareAndSwapIsDecidedByTheLog(t *testing.T) {
	ss := newServers(t, 3)
	l := leader(t, ss)
	ctx, cancel := context.WithTimeout(context.Background(), waitBound)
	defer cancel()
	if r, err := write(ctx, l.g, indexdb.NameWrite{Name: "cas.example", Target: store.Sum([]byte("0")), Cond: indexapi.IfAbsent(), At: time.Now(), Keep: 100}); err != nil || r.Err != nil {
		t.Fatalf("create = %+v, %v", r, err)
	}
	var mu sync.Mutex
	won := map[uint64]int{} // version → writer
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for try := range 5 {
				cur, err := l.db.Get(ctx, "cas.example")
				if err != nil {
					t.Error(err)
					return
				}
				r, err := write(ctx, l.g, indexdb.NameWrite{Name: "cas.example", Target: store.Sum([]byte(fmt.Sprint(w, try))),
					Cond: indexapi.IfMatch(cur.Version), At: time.Now(), Keep: 100})
				if err != nil {
					t.Error(err)
					return
				}
				var pe *indexdb.PreconditionError
				switch {
				case r.Err == nil:
					if r.Record.Version != cur.Version+1 {
						t.Errorf("writer %d expected %d and wrote version %d", w, cur.Version, r.Record.Version)
					}
					mu.Lock()
					if prev, dup := won[r.Record.Version]; dup {
						t.Errorf("version %d acknowledged to writers %d and %d", r.Record.Version, prev, w)
					}
					won[r.Record.Version] = w
					mu.Unlock()
				case !errors.As(r.Err, &pe):
					t.Errorf("writer %d: verdict %v", w, r.Err)
				}
			}
		})
	}
	wg.Wait()
	final, err := l.db.Get(ctx, "cas.example")
	if err != nil || final.Version != uint64(len(won))+1 {
		t.Fatalf("final version %d with %d acknowledged swaps (+1 create), %v", final.Version, len(won), err)
	}
	want := history(t, l)
	for _, s := range ss {
		eventually(t, s.id+" holds the leader's history", func() bool { return bytes.Equal(history(t, s), want) })
	}
}

// history is s's history of cas.example as JSON.
func history(t *testing.T, s *server) []byte {
	h, err := s.db.History(context.Background(), "cas.example")
	if err != nil && !errors.Is(err, indexdb.ErrNotFound) {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	for _, r := range h {
		b, _ := r.MarshalJSON()
		buf.Write(b)
	}
	return buf.Bytes()
}

// TestRestartReplaysNothingTwiceAndSnapshotsRestore: after every server
// restarts from its disk the names are as acknowledged (the log replay
// skips what each database already applied), and a snapshot of one server
// restored into an empty database gives the same names.
func TestRestartReplaysNothingTwiceAndSnapshotsRestore(t *testing.T) {
	ss := newServers(t, 3)
	l := leader(t, ss)
	ctx, cancel := context.WithTimeout(context.Background(), waitBound)
	defer cancel()
	var names []string
	for i := range 10 {
		n := fmt.Sprintf("n%d.example", i%4)
		if r, err := write(ctx, l.g, indexdb.NameWrite{Name: n, Target: store.Sum([]byte{byte(i)}), At: time.Now(), Keep: 10}); err != nil || r.Err != nil {
			t.Fatalf("write %d = %+v, %v", i, r, err)
		}
		names = append(names, n)
	}
	slices.Sort(names)
	names = slices.Compact(names)
	before := map[string]indexdb.Record{}
	for _, n := range names {
		before[n], _ = l.db.Get(ctx, n)
	}
	for _, s := range ss {
		s.stop(t)
	}
	for _, s := range ss {
		s.start(t)
	}
	l = leader(t, ss)
	if err := l.g.Barrier(ctx); err != nil {
		t.Fatal(err)
	}
	for _, s := range ss {
		for _, n := range names {
			eventually(t, s.id+" has "+n, func() bool {
				rec, err := s.db.Get(ctx, n)
				return err == nil && rec == before[n]
			})
		}
	}
	fsm := NewFSM(l.db, nil)
	snap, err := fsm.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	var sink memSink
	if err := snap.Persist(&sink); err != nil {
		t.Fatal(err)
	}
	kdb, err := bolt.Open(filepath.Join(t.TempDir(), "fresh.db"), bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer kdb.Close()
	fresh, _ := indexdb.Open(ctx, kdb, time.Now)
	if err := NewFSM(fresh, nil).Restore(sink.reader()); err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if rec, err := fresh.Get(ctx, n); err != nil || rec != before[n] {
			t.Fatalf("%s after restore = %+v, %v; want %+v", n, rec, err, before[n])
		}
	}
}
