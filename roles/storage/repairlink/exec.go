package repairlink

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/ronhq/ron/roles/storage/peer"
	"github.com/ronhq/ron/roles/storage/repair"
	"github.com/ronhq/ron/store"
)

// Reasons of failed repair transfers that are this node's side.
const (
	reasonLocal  = "local"  // the local copy could not be read (gone, quarantined, corrupt)
	reasonSource = "source" // no holder sent the object (pull)
	reasonCommit = "commit" // the pulled object could not be stored
)

// List implements repair.Local over the engine.
func (l *Link) List(ctx context.Context, after *store.ID, limit int) ([]store.Info, error) {
	return l.opt.Engine.List(ctx, after, limit)
}

// Stat implements repair.Local over the engine.
func (l *Link) Stat(ctx context.Context, id store.ID) (store.Info, error) {
	return l.opt.Engine.Stat(ctx, id)
}

// Count implements repair.Local: the engine's object count.
func (l *Link) Count() int64 { return l.opt.Engine.Stats().Objects }

// Has implements repair.Remote over the peer client.
func (l *Link) Has(ctx context.Context, base string, ids []store.ID) (map[store.ID]bool, error) {
	return l.opt.Peers.Has(ctx, base, ids)
}

// Drop deletes an excess copy and withdraws its provider record, as DELETE
// /o/{b3} does.
func (l *Link) Drop(ctx context.Context, id store.ID) error {
	if err := l.opt.Engine.Delete(ctx, id); err != nil && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	l.opt.Withdraw(id)
	return nil
}

// Push streams the local verified copy into base's PUT /o/{b3} as a
// replica, paced by m. A 409 from the target re-hashes the local copy
// whole and quarantines it when it is wrong.
func (l *Link) Push(ctx context.Context, id store.ID, base string, m repair.Meter) (bool, error) {
	src, info, err := l.opt.OpenChunks(ctx, id)
	if err != nil {
		return false, repair.Fail(reasonLocal, err)
	}
	// The transport may still read the body after PutReplica returned: the
	// body releases the object only once that late read is over, and rctx
	// ends a late read that waits for pacing tokens.
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	body := peer.NewReplicaBody(m.Reader(rctx, info.Size, src), src.Close)
	defer body.Close()
	existing, err := l.opt.Peers.PutReplica(ctx, base, id, info.Size, info.ContentType, body)
	if err == nil {
		return existing, nil
	}
	var se *peer.SourceError
	if errors.As(err, &se) {
		return false, repair.Fail(reasonLocal, se.Err)
	}
	reason := peer.ReasonOf(err)
	if reason == peer.ReasonHashMismatch {
		cancel()
		_ = body.Close()
		l.Recheck(ctx, id)
	}
	return false, repair.Fail(reason, err)
}

// Recheck hashes the local copy of id whole after a target rejected it
// (409): a chunk that fails its digest quarantines it in the engine; a
// whole digest other than id quarantines it here and reports it to
// Options.Quarantined. Either way the role withdraws the provider record
// and queues an urgent pull.
func (l *Link) Recheck(ctx context.Context, id store.ID) {
	src, _, err := l.opt.OpenChunks(ctx, id)
	if err != nil {
		return
	}
	defer src.Close()
	h := store.NewHasher()
	for {
		chunk, err := src.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return // a corrupt chunk: the engine quarantined the object and told the role
		}
		_, _ = h.Write(chunk)
	}
	if got := h.ID(); got != id {
		src.Close()
		if err := l.opt.Engine.Quarantine(ctx, id, fmt.Sprintf("repair: whole digest is %s", got.Prefix())); err == nil {
			l.opt.Quarantined(id)
		}
	}
}
