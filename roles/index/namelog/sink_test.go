package namelog

import (
	"bytes"
	"io"

	"github.com/hashicorp/raft"
)

// memSink is a raft.SnapshotSink in memory.
type memSink struct {
	bytes.Buffer
	closed, canceled bool
}

var _ raft.SnapshotSink = (*memSink)(nil)

func (s *memSink) ID() string            { return "mem" }
func (s *memSink) Close() error          { s.closed = true; return nil }
func (s *memSink) Cancel() error         { s.canceled = true; return nil }
func (s *memSink) reader() io.ReadCloser { return io.NopCloser(bytes.NewReader(s.Bytes())) }
