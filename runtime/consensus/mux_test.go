package consensus_test

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/hashicorp/raft"

	"github.com/ronhq/ron/runtime/consensus"
)

// listFSM is a test machine: it appends each entry's payload to a list,
// snapshots the list as lines and restores it from them.
type listFSM struct{ items []string }

func (f *listFSM) Apply(l *raft.Log) any {
	f.items = append(f.items, string(l.Data))
	return len(f.items)
}

func (f *listFSM) Snapshot() (raft.FSMSnapshot, error) {
	return listSnapshot(strings.Join(f.items, "\n")), nil
}

func (f *listFSM) Restore(rc io.ReadCloser) error {
	b, err := io.ReadAll(rc)
	if err != nil {
		return err
	}
	f.items = nil
	if len(b) > 0 {
		f.items = strings.Split(string(b), "\n")
	}
	return nil
}

type listSnapshot string

func (s listSnapshot) Persist(sink raft.SnapshotSink) error {
	if _, err := sink.Write([]byte(s)); err != nil {
		return err
	}
	return sink.Close()
}
func (listSnapshot) Release() {}

// memSink is a raft.SnapshotSink in memory.
type memSink struct{ bytes.Buffer }

func (*memSink) ID() string    { return "mem" }
func (*memSink) Cancel() error { return nil }
func (*memSink) Close() error  { return nil }

// TestMuxDispatchesAndSnapshots: entries reach the machine of their kind
// without the kind byte; an unknown or empty entry answers ErrUnknownKind;
// a snapshot of every machine restores into fresh machines, a machine with
// no section restores empty, and a snapshot that is not one fails.
func TestMuxDispatchesAndSnapshots(t *testing.T) {
	a, b := &listFSM{}, &listFSM{}
	m := consensus.NewMux()
	m.Register('a', a)
	m.Register('b', b)
	for _, e := range []string{"a1", "b1", "a2"} {
		if got := m.Apply(&raft.Log{Type: raft.LogCommand, Data: consensus.Command(consensus.Kind(e[0]), []byte(e))}); got == nil {
			t.Fatalf("%s: no answer", e)
		}
	}
	if strings.Join(a.items, ",") != "a1,a2" || strings.Join(b.items, ",") != "b1" {
		t.Fatalf("a %v, b %v", a.items, b.items)
	}
	for _, data := range [][]byte{nil, consensus.Command('z', []byte("x"))} {
		if err, _ := m.Apply(&raft.Log{Type: raft.LogCommand, Data: data}).(error); !errors.Is(err, consensus.ErrUnknownKind) {
			t.Fatalf("entry %q answered %v", data, err)
		}
	}

	snap, err := m.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	var sink memSink
	if err := snap.Persist(&sink); err != nil {
		t.Fatal(err)
	}
	snap.Release()
	a2, b2, c2 := &listFSM{}, &listFSM{}, &listFSM{items: []string{"stale"}}
	fresh := consensus.NewMux()
	fresh.Register('a', a2)
	fresh.Register('b', b2)
	fresh.Register('c', c2)
	if err := fresh.Restore(io.NopCloser(bytes.NewReader(sink.Bytes()))); err != nil {
		t.Fatal(err)
	}
	if strings.Join(a2.items, ",") != "a1,a2" || strings.Join(b2.items, ",") != "b1" || len(c2.items) != 0 {
		t.Fatalf("restored a %v, b %v, c %v", a2.items, b2.items, c2.items)
	}
	// A node without machine 'b' (a role it does not run) skips its section.
	a3 := &listFSM{}
	partial := consensus.NewMux()
	partial.Register('a', a3)
	if err := partial.Restore(io.NopCloser(bytes.NewReader(sink.Bytes()))); err != nil || strings.Join(a3.items, ",") != "a1,a2" {
		t.Fatalf("restore without machine b: %v %v", err, a3.items)
	}

	bad := [][]byte{[]byte("not a snapshot"), append([]byte("ron-snapshot-1\n"), 'a', 0xff),
		append([]byte("ron-snapshot-1\n"), 'a', 5, 'x'), append([]byte("ron-snapshot-1\n"), 'a', 0, 'a', 0)}
	for _, b := range bad {
		if err := fresh.Restore(io.NopCloser(bytes.NewReader(b))); err == nil {
			t.Errorf("snapshot %q restored", b)
		}
	}
}

// TestPlaneWithoutGroup: a plane with no group attached refuses proposals
// and barriers with ErrNoQuorum and explains why with the node's reason.
func TestPlaneWithoutGroup(t *testing.T) {
	p := consensus.NewPlane()
	if _, err := p.Propose(t.Context(), consensus.KindNames, []byte("{}")); !errors.Is(err, consensus.ErrNoQuorum) {
		t.Fatalf("Propose: %v", err)
	}
	if err := p.Barrier(t.Context()); !errors.Is(err, consensus.ErrNoQuorum) {
		t.Fatalf("Barrier: %v", err)
	}
	if id, _ := p.Leader(); id != "" || p.Freshness() != (consensus.Freshness{}) {
		t.Fatalf("leader %q freshness %+v", id, p.Freshness())
	}
	if !strings.Contains(p.NoQuorumReason(), "no leader") {
		t.Fatalf("default reason %q", p.NoQuorumReason())
	}
	p.SetNoQuorumReason(func() string { return "no servers" })
	if p.NoQuorumReason() != "no servers" {
		t.Fatalf("reason %q", p.NoQuorumReason())
	}
}
