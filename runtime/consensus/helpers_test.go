package consensus_test

import (
	"encoding/json"
	"io"
	"slices"
	"sync"
	"testing"

	"github.com/hashicorp/raft"

	"github.com/ronhq/ron/runtime/consensus/consensustest"
)

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

// newLogFSM is a consensustest.NewFSM of a fresh logFSM at every start
// (the log and snapshots on disk rebuild it).
func newLogFSM(testing.TB, *consensustest.Server) (raft.FSM, func()) { return &logFSM{}, func() {} }

// applied is the commands s's state machine applied.
func applied(s *consensustest.Server) []string { return s.FSM.(*logFSM).applied() }
