package committer

import (
	"context"
	"time"

	"github.com/ronhq/ron/roles/registry/registryapi"
	"github.com/ronhq/ron/roles/registry/registryapi/descriptor"
	"github.com/ronhq/ron/roles/registry/segment"
)

// msgKind names what a message asks of the committer.
type msgKind int

const (
	kindPropose msgKind = iota
	kindApprove
	kindCommit
)

// message is one queued request. The caller waits on reply (capacity 1,
// so the committer never blocks sending) until ctx ends.
type message struct {
	kind       msgKind
	ctx        context.Context
	corrID     string
	set        *descriptor.Set     // propose
	id         string              // approve, commit
	approval   descriptor.Approval // approve
	verifiedAt uint64              // approve: HEAD version whose signer set verified approval
	reply      chan reply
}

// reply is the committer's answer to one message.
type reply struct {
	proposed  registryapi.Proposed
	approval  registryapi.ApprovalResult
	committed registryapi.Committed
	repeat    bool // an idempotent repeat: no state change, not counted
	audit     auditEvent
	err       error
}

// batch is one group commit: the messages taken, their replies (sent only
// after both fsyncs), the log records to append, the commits to announce
// and the audit/metric effects to run once durable.
type batch struct {
	msgs    []*message
	replies []reply
	skip    []bool // the message's ctx had ended: not applied, no reply
	records []segment.Record
	commits []registryapi.Committed
	after   []func()
	started time.Time
}

// later queues fn to run once the batch is durable.
func (b *batch) later(fn func()) { b.after = append(b.after, fn) }
