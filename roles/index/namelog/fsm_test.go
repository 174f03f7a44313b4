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

	"go.uber.org/goleak"

	"github.com/hashicorp/raft"
	"github.com/ronhq/ron/roles/index/indexapi"
	"github.com/ronhq/ron/roles/index/indexdb"
	"github.com/ronhq/ron/runtime/consensus"
	"github.com/ronhq/ron/runtime/consensus/consensustest"
	"github.com/ronhq/ron/store"
	"github.com/ronhq/ron/store/kv/bolt"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// indexServer is the consensustest.NewFSM of an index server: its index
// database (bolt, in the server's dir, so it survives a restart) under the
// names state machine.
func indexServer(t testing.TB, s *consensustest.Server) (raft.FSM, func()) {
	kdb, err := bolt.Open(filepath.Join(s.Dir, "index.db"), bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	db, err := indexdb.Open(context.Background(), kdb, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	return NewFSM(db, func(err error) { t.Errorf("%s: fatal: %v", s.ID, err) }), func() { _ = kdb.Close() }
}

// dbOf is s's index database.
func dbOf(s *consensustest.Server) *indexdb.DB { return s.FSM.(*FSM).db }

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
	ss := consensustest.NewGroup(t, 3, indexServer)
	l := consensustest.Leader(t, ss)
	ctx, cancel := context.WithTimeout(context.Background(), consensustest.WaitBound)
	defer cancel()
	if r, err := write(ctx, l.Group, indexdb.NameWrite{Name: "cas.example", Target: store.Sum([]byte("0")), Cond: indexapi.IfAbsent(), At: time.Now(), Keep: 100}); err != nil || r.Err != nil {
		t.Fatalf("create = %+v, %v", r, err)
	}
	var mu sync.Mutex
	won := map[uint64]int{} // version → writer
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for try := range 5 {
				cur, err := dbOf(l).Get(ctx, "cas.example")
				if err != nil {
					t.Error(err)
					return
				}
				r, err := write(ctx, l.Group, indexdb.NameWrite{Name: "cas.example", Target: store.Sum([]byte(fmt.Sprint(w, try))),
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
	final, err := dbOf(l).Get(ctx, "cas.example")
	if err != nil || final.Version != uint64(len(won))+1 {
		t.Fatalf("final version %d with %d acknowledged swaps (+1 create), %v", final.Version, len(won), err)
	}
	want := history(t, l)
	for _, s := range ss {
		consensustest.Eventually(t, s.ID+" holds the leader's history", func() bool { return bytes.Equal(history(t, s), want) })
	}
}

// history is s's history of cas.example as JSON.
func history(t *testing.T, s *consensustest.Server) []byte {
	h, err := dbOf(s).History(context.Background(), "cas.example")
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
	ss := consensustest.NewGroup(t, 3, indexServer)
	l := consensustest.Leader(t, ss)
	ctx, cancel := context.WithTimeout(context.Background(), consensustest.WaitBound)
	defer cancel()
	var names []string
	for i := range 10 {
		n := fmt.Sprintf("n%d.example", i%4)
		if r, err := write(ctx, l.Group, indexdb.NameWrite{Name: n, Target: store.Sum([]byte{byte(i)}), At: time.Now(), Keep: 10}); err != nil || r.Err != nil {
			t.Fatalf("write %d = %+v, %v", i, r, err)
		}
		names = append(names, n)
	}
	slices.Sort(names)
	names = slices.Compact(names)
	before := map[string]indexdb.Record{}
	for _, n := range names {
		before[n], _ = dbOf(l).Get(ctx, n)
	}
	for _, s := range ss {
		s.Stop(t)
	}
	for _, s := range ss {
		s.Start(t)
	}
	l = consensustest.Leader(t, ss)
	if err := l.Group.Barrier(ctx); err != nil {
		t.Fatal(err)
	}
	for _, s := range ss {
		for _, n := range names {
			consensustest.Eventually(t, s.ID+" has "+n, func() bool {
				rec, err := dbOf(s).Get(ctx, n)
				return err == nil && rec == before[n]
			})
		}
	}
	fsm := NewFSM(dbOf(l), func(err error) { t.Errorf("fatal: %v", err) })
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
	if err := NewFSM(fresh, func(err error) { t.Errorf("fatal: %v", err) }).Restore(sink.reader()); err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if rec, err := fresh.Get(ctx, n); err != nil || rec != before[n] {
			t.Fatalf("%s after restore = %+v, %v; want %+v", n, rec, err, before[n])
		}
	}
}

// TestDatabaseFailureIsFatalAndVerdictsAreNot: an entry the database
// cannot store calls fatal (the server must stop rather than drift from
// the log); a verdict or a malformed entry is answered and does not.
func TestDatabaseFailureIsFatalAndVerdictsAreNot(t *testing.T) {
	kdb, err := bolt.Open(filepath.Join(t.TempDir(), "index.db"), bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	db, err := indexdb.Open(context.Background(), kdb, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	var fatal []error
	fsm := NewFSM(db, func(err error) { fatal = append(fatal, err) })
	entry := func(w indexdb.NameWrite) *raft.Log {
		b, err := Encode(w)
		if err != nil {
			t.Fatal(err)
		}
		return &raft.Log{Type: raft.LogCommand, Index: 1, Data: b}
	}
	verdicts := []*raft.Log{
		{Type: raft.LogCommand, Index: 1, Data: []byte(`{"op":"move"}`)},
		entry(indexdb.NameWrite{Name: "never.example", Delete: true, At: time.Now(), Keep: 1}),
		entry(indexdb.NameWrite{Name: "a.example", Target: store.Sum([]byte("x")), Cond: indexapi.IfMatch(3), At: time.Now(), Keep: 1}),
	}
	for _, l := range verdicts {
		if r := fsm.Apply(l).(Result); r.Err == nil {
			t.Fatalf("entry %s applied", l.Data)
		}
	}
	if len(fatal) != 0 {
		t.Fatalf("a verdict was fatal: %v", fatal)
	}
	if err := kdb.Close(); err != nil {
		t.Fatal(err)
	}
	r := fsm.Apply(entry(indexdb.NameWrite{Name: "a.example", Target: store.Sum([]byte("x")), At: time.Now(), Keep: 1})).(Result)
	if r.Err == nil || len(fatal) != 1 {
		t.Fatalf("a write to a closed database answered %v and called fatal %d times", r.Err, len(fatal))
	}
	// Once failed, no later entry is applied (the applied index must not
	// pass the one that failed), even one the database could take.
	later := entry(indexdb.NameWrite{Name: "b.example", Target: store.Sum([]byte("y")), At: time.Now(), Keep: 1})
	later.Index = 2
	if r := fsm.Apply(later).(Result); !errors.Is(r.Err, errStopped) || len(fatal) != 1 {
		t.Fatalf("an entry after the failure answered %v (fatal called %d times), want errStopped once", r.Err, len(fatal))
	}
}
