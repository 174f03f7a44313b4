package consensus

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/hashicorp/raft"
)

// Kind names one state machine of the control plane: the first byte of
// every command entry says which machine applies it.
type Kind byte

// The control plane's state machines.
const (
	KindNames    Kind = 'n' // name pointers (roles/index/namelog)
	KindRegistry Kind = 'r' // the registry's log and proposals (roles/registry/reglog)
)

// snapshotMagic opens a multiplexed snapshot.
const snapshotMagic = "ron-snapshot-1\n"

// maxSection bounds one machine's part of a snapshot read back (a
// corrupt length must not allocate without bound).
const maxSection = 8 << 30

// ErrUnknownKind is the response to a command entry whose kind has no
// machine (every server of one build answers it the same way).
var ErrUnknownKind = errors.New("consensus: entry of an unknown kind")

// Command is the log entry that gives payload to the machine of kind.
func Command(kind Kind, payload []byte) []byte {
	return append([]byte{byte(kind)}, payload...)
}

// Mux is the state machine of the whole group: it hands each command
// entry, without its kind byte, to the machine registered for that kind,
// and snapshots and restores all of them as one. Machines are registered
// before the group opens and never after.
type Mux struct {
	machines map[Kind]raft.FSM
}

var _ raft.FSM = (*Mux)(nil)

// NewMux returns an empty Mux.
func NewMux() *Mux { return &Mux{machines: map[Kind]raft.FSM{}} }

// Register adds the machine of kind; a second machine for one kind panics
// (a wiring error).
func (m *Mux) Register(kind Kind, fsm raft.FSM) {
	if _, dup := m.machines[kind]; dup {
		panic(fmt.Sprintf("consensus: two state machines for kind %q", kind))
	}
	m.machines[kind] = fsm
}

// Apply implements raft.FSM: an entry of an unknown kind, or an empty
// one, answers ErrUnknownKind and changes nothing.
func (m *Mux) Apply(l *raft.Log) any {
	if len(l.Data) == 0 {
		return ErrUnknownKind
	}
	fsm, ok := m.machines[Kind(l.Data[0])]
	if !ok {
		return fmt.Errorf("%w %q", ErrUnknownKind, l.Data[0])
	}
	inner := *l
	inner.Data = l.Data[1:]
	return fsm.Apply(&inner)
}

// kinds returns the registered kinds in order.
func (m *Mux) kinds() []Kind {
	out := make([]Kind, 0, len(m.machines))
	for k := range m.machines {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// Snapshot implements raft.FSM: every machine's snapshot, taken in turn
// between the same two applies.
func (m *Mux) Snapshot() (raft.FSMSnapshot, error) {
	var s muxSnapshot
	for _, k := range m.kinds() {
		part, err := m.machines[k].Snapshot()
		if err != nil {
			s.Release()
			return nil, fmt.Errorf("consensus: snapshot of %q: %w", k, err)
		}
		s.parts = append(s.parts, kindSnapshot{kind: k, snap: part})
	}
	return &s, nil
}

// Restore implements raft.FSM: each section goes to its machine, a section
// of a kind this node has no machine for is skipped (the node keeps no such
// state: it does not run that role), and a machine with no section restores
// from an empty stream (the snapshot held none of its state). A snapshot with a wrong header changes nothing; a section
// that does not parse, or that its machine refuses, stops the restore with
// an error (each machine's own restore is all or nothing).
func (m *Mux) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	r := bufio.NewReader(rc)
	magic := make([]byte, len(snapshotMagic))
	if _, err := io.ReadFull(r, magic); err != nil || string(magic) != snapshotMagic {
		return fmt.Errorf("consensus: snapshot: not a ron snapshot")
	}
	done := map[Kind]bool{}
	for {
		kind, body, err := readSection(r)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		if done[kind] {
			return fmt.Errorf("consensus: snapshot: section %q twice", kind)
		}
		done[kind] = true
		fsm, ok := m.machines[kind]
		if !ok {
			continue // state this node does not keep (a role it does not run)
		}
		if err := fsm.Restore(io.NopCloser(bytes.NewReader(body))); err != nil {
			return fmt.Errorf("consensus: restore %q: %w", kind, err)
		}
	}
	for _, k := range m.kinds() {
		if !done[k] {
			if err := m.machines[k].Restore(io.NopCloser(bytes.NewReader(nil))); err != nil {
				return fmt.Errorf("consensus: restore %q: %w", k, err)
			}
		}
	}
	return nil
}

// readSection reads one section: its kind, a uvarint length and the body.
// A clean end before a section is io.EOF.
func readSection(r *bufio.Reader) (Kind, []byte, error) {
	k, err := r.ReadByte()
	if err != nil {
		return 0, nil, err
	}
	n, err := binary.ReadUvarint(r)
	if err != nil || n > maxSection {
		return 0, nil, fmt.Errorf("consensus: snapshot: bad length of section %q", k)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		return 0, nil, fmt.Errorf("consensus: snapshot: section %q is truncated", k)
	}
	return Kind(k), body, nil
}

// kindSnapshot is one machine's part of a snapshot.
type kindSnapshot struct {
	kind Kind
	snap raft.FSMSnapshot
}

// muxSnapshot is a Mux snapshot: every machine's part, written as
// sections after snapshotMagic.
type muxSnapshot struct{ parts []kindSnapshot }

// Persist implements raft.FSMSnapshot.
func (s *muxSnapshot) Persist(sink raft.SnapshotSink) error {
	err := s.write(sink)
	if err != nil {
		_ = sink.Cancel()
		return err
	}
	return sink.Close()
}

// write writes the magic and each part's section to w.
func (s *muxSnapshot) write(w io.Writer) error {
	if _, err := io.WriteString(w, snapshotMagic); err != nil {
		return err
	}
	for _, p := range s.parts {
		var buf bufferSink
		if err := p.snap.Persist(&buf); err != nil {
			return fmt.Errorf("consensus: snapshot of %q: %w", p.kind, err)
		}
		head := binary.AppendUvarint([]byte{byte(p.kind)}, uint64(buf.Len()))
		if _, err := w.Write(head); err != nil {
			return err
		}
		if _, err := w.Write(buf.Bytes()); err != nil {
			return err
		}
	}
	return nil
}

// Release implements raft.FSMSnapshot.
func (s *muxSnapshot) Release() {
	for _, p := range s.parts {
		p.snap.Release()
	}
}

// bufferSink is the raft.SnapshotSink a machine persists its part into.
type bufferSink struct{ bytes.Buffer }

func (*bufferSink) ID() string    { return "" }
func (*bufferSink) Cancel() error { return nil }
func (*bufferSink) Close() error  { return nil }

// BytesSnapshot is a state machine's snapshot taken in memory (between two
// applies): Persist writes it to the sink whole.
type BytesSnapshot []byte

// Persist implements raft.FSMSnapshot.
func (s BytesSnapshot) Persist(sink raft.SnapshotSink) error {
	if _, err := sink.Write(s); err != nil {
		_ = sink.Cancel()
		return err
	}
	return sink.Close()
}

// Release implements raft.FSMSnapshot.
func (BytesSnapshot) Release() {}
