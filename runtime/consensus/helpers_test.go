package consensus

import (
	"encoding/json"
	"io"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	"github.com/rs/zerolog"
)

// waitBound is the stated bound of every wait in these tests: elections
// under ProfileLocal take a few hundred milliseconds.
const waitBound = 10 * time.Second

// eventually polls cond every 5 ms until it holds, failing after waitBound.
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

// logFSM is a state machine that records every applied command in order
// and answers each with its position.
type logFSM struct {
	mu  sync.Mutex
	cmd []string
}

func (f *logFSM) Apply(l *raft.Log) any {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cmd = append(f.cmd, string(l.Data))
	return len(f.cmd)
}

func (f *logFSM) applied() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.cmd)
}

func (f *logFSM) Snapshot() (raft.FSMSnapshot, error) { return snapshot(f.applied()), nil }

func (f *logFSM) Restore(r io.ReadCloser) error {
	defer r.Close()
	var cmd []string
	if err := json.NewDecoder(r).Decode(&cmd); err != nil {
		return err
	}
	f.mu.Lock()
	f.cmd = cmd
	f.mu.Unlock()
	return nil
}

type snapshot []string

func (s snapshot) Persist(sink raft.SnapshotSink) error {
	if err := json.NewEncoder(sink).Encode([]string(s)); err != nil {
		_ = sink.Cancel()
		return err
	}
	return sink.Close()
}

func (snapshot) Release() {}

// server is one test server: its group, its state machine and its dir.
type server struct {
	id, dir string
	g       *Group
	fsm     *logFSM
}

// start opens s with a fresh state machine on 127.0.0.1 (port addr, or any
// port when addr is "").
func (s *server) start(t *testing.T, addr string) {
	t.Helper()
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	s.fsm = &logFSM{}
	g, err := Open(Options{ID: s.id, Dir: s.dir, Bind: addr, FSM: s.fsm, Profile: ProfileLocal, Log: zerolog.Nop()})
	if err != nil {
		t.Fatalf("open %s: %v", s.id, err)
	}
	s.g = g
}

// stop closes s's group (as a kill would leave its disk: acknowledged
// entries are fsynced before Apply returns).
func (s *server) stop(t *testing.T) {
	t.Helper()
	if s.g == nil {
		return
	}
	if err := s.g.Close(); err != nil {
		t.Errorf("close %s: %v", s.id, err)
	}
	s.g = nil
}

// newGroup starts n servers with data dirs and bootstraps them through
// BootstrapSet, each with the same list.
func newGroup(t *testing.T, n int) []*server {
	t.Helper()
	ss := make([]*server, n)
	var seen []Candidate
	for i := range ss {
		ss[i] = &server{id: string(rune('a' + i)), dir: t.TempDir()}
		ss[i].start(t, "")
		seen = append(seen, Candidate{ID: ss[i].id, Addr: ss[i].g.Addr()})
	}
	t.Cleanup(func() {
		for _, s := range ss {
			s.stop(t)
		}
	})
	for _, s := range ss {
		servers, ok := BootstrapSet(s.id, seen, n)
		if !ok {
			t.Fatalf("%s: no bootstrap set from %v", s.id, seen)
		}
		if err := s.g.Bootstrap(servers); err != nil {
			t.Fatal(err)
		}
	}
	return ss
}

// leader waits for one of the running servers to lead and returns it.
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
