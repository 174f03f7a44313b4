package reglog_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/roles/registry/committer"
	"github.com/ronhq/ron/roles/registry/registryapi"
	"github.com/ronhq/ron/roles/registry/registryapi/descriptor"
	"github.com/ronhq/ron/roles/registry/reglog"
	"github.com/ronhq/ron/roles/registry/regstore"
	"github.com/ronhq/ron/roles/registry/segment"
	"github.com/ronhq/ron/roles/registry/tiles"
	"github.com/ronhq/ron/runtime/consensus"
	"github.com/ronhq/ron/runtime/consensus/consensustest"
	"github.com/ronhq/ron/store/kv"
	"github.com/ronhq/ron/store/kv/memkv"
)

// replMember is one member of a replicated registry: its stores, its
// committer in replicated mode and its plane.
type replMember struct {
	id    string
	plane *consensus.Plane
	log   *segment.Log
	db    kv.DB
	com   atomic.Pointer[committer.Committer]
	key   atomic.Pointer[string]

	mu      sync.Mutex
	commits []uint64 // OnCommit versions
}

func (m *replMember) committed() []uint64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]uint64(nil), m.commits...)
}

// newReplMember builds a member whose FSM is registered in its plane and
// whose committer runs until the test ends.
func newReplMember(t *testing.T, id string) *replMember {
	t.Helper()
	log, _, err := segment.Open("/reg/log", segment.Options{FS: segment.NewMemFS(), SegmentRecords: 256,
		Check: committer.CheckRecord, DurableHead: -1})
	if err != nil {
		t.Fatal(err)
	}
	m := &replMember{id: id, plane: consensus.NewPlane(), log: log, db: memkv.New()}
	fsm := reglog.NewFSM(reglog.Options{Log: log, DB: m.db,
		Fatal: func(err error) { t.Errorf("%s: fatal: %v", id, err) },
		InstallKey: func(s string) error {
			if !m.key.CompareAndSwap(nil, &s) && *m.key.Load() != s {
				return errors.New("another key")
			}
			return nil
		},
		Key: func() string {
			if k := m.key.Load(); k != nil {
				return *k
			}
			return ""
		},
		Applied: func(n reglog.Notice) {
			if c := m.com.Load(); c != nil {
				c.Notice(n.Token, n.Effects)
			}
		}})
	m.plane.Register(consensus.KindRegistry, fsm)
	com, err := committer.Open(context.Background(), committer.Options{Log: log, DB: m.db, Logger: zerolog.Nop(),
		Replicate: func(ctx context.Context, fx committer.Effects) error {
			return reglog.Propose(ctx, m.plane, reglog.Entry{Effects: fx})
		},
		Leading: func() bool { return m.plane.Freshness().Leader },
		Barrier: m.plane.Barrier,
		OnCommit: func(c registryapi.Committed) {
			m.mu.Lock()
			m.commits = append(m.commits, c.Version)
			m.mu.Unlock()
		}}, nil, segment.Recovery{})
	if err != nil {
		t.Fatal(err)
	}
	m.com.Store(com)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { // registry-committer of member id: ends at cleanup
		defer close(done)
		_ = com.Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		_ = log.Close()
		_ = m.db.Close()
	})
	return m
}

func key(b byte) ed25519.PrivateKey {
	return ed25519.NewKeyFromSeed(bytes.Repeat([]byte{b}, ed25519.SeedSize))
}

func signerOf(b byte) descriptor.Signer {
	pub := key(b).Public().(ed25519.PublicKey)
	return descriptor.Signer{ID: fmt.Sprintf("org:test#k%d", b), Algo: descriptor.AlgoEd25519, Pubkey: pub,
		PubkeyB64: base64.StdEncoding.EncodeToString(pub)}
}

// nextSet is a set extending h with signer 1 (quorum 1 of 1) and note.
func nextSet(t *testing.T, h *committer.Head, note string) *descriptor.Set {
	t.Helper()
	s := signerOf(1)
	raw, _ := json.Marshal(map[string]any{"version": h.Version + 1, "prev_hash": h.PayloadB3,
		"created_at": descriptor.FormatTime(time.Now()), "note": note, "items": []any{
			map[string]any{"kind": "signer", "id": s.ID, "algo": "ed25519", "pubkey": s.PubkeyB64},
			map[string]any{"kind": "quorum", "id": "quorum", "m": 1, "n": 1}}})
	set, err := descriptor.ParseSet(raw, committer.DefaultLimits().Limits, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// commitOn runs propose → approve → commit on m's committer.
func commitOn(t *testing.T, m *replMember, note string) (registryapi.Committed, error) {
	t.Helper()
	c := m.com.Load()
	ctx, cancel := context.WithTimeout(context.Background(), consensustest.WaitBound)
	defer cancel()
	set := nextSet(t, c.Head(), note)
	p, err := c.Propose(ctx, set, "")
	if err != nil {
		return registryapi.Committed{}, err
	}
	if _, err := c.Approve(ctx, p.ProposalID, descriptor.Sign(key(1), signerOf(1).ID, set.B3, time.Now()), ""); err != nil {
		return registryapi.Committed{}, err
	}
	return c.Commit(ctx, p.ProposalID, "")
}

func leaderOf(t *testing.T, ms []*replMember) *replMember {
	t.Helper()
	var l *replMember
	consensustest.Eventually(t, "a leader", func() bool {
		for _, m := range ms {
			if m.plane.Group() != nil && m.plane.Freshness().Leader {
				l = m
				return true
			}
		}
		return false
	})
	return l
}

// logBytes renders every record of m's log.
func logBytes(t *testing.T, m *replMember) string {
	t.Helper()
	var sb strings.Builder
	if n := m.log.Next(); n > 0 {
		if err := m.log.Scan(0, n-1, func(r segment.Record) error {
			fmt.Fprintf(&sb, "%d %s %s\n", r.Version, r.CorrID, r.Artifact)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	return sb.String()
}

// dbBytes renders m's registry.db.
func dbBytes(t *testing.T, m *replMember) string {
	t.Helper()
	var sb strings.Builder
	err := m.db.View(context.Background(), func(tx kv.Tx) error {
		for _, name := range []string{committer.BucketMeta, committer.BucketProposals} {
			if b := tx.Bucket(name); b != nil {
				cur := b.Cursor()
				for k, v := cur.First(); k != nil; k, v = cur.Next() {
					fmt.Fprintf(&sb, "%s/%s=%s\n", name, k, v)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return sb.String()
}

// checkpoint builds m's tree over a fresh tlog.db with the installed key
// and returns the checkpoint note covering HEAD.
func checkpoint(t *testing.T, m *replMember) []byte {
	t.Helper()
	k, err := tiles.ParseLogKey(*m.key.Load())
	if err != nil {
		t.Fatal(err)
	}
	tree, err := tiles.OpenTree(context.Background(), memkv.New(), k)
	if err != nil {
		t.Fatal(err)
	}
	cp, err := regstore.ExtendTree(context.Background(), tree, m.log, m.com.Load().Head().Version)
	if err != nil {
		t.Fatal(err)
	}
	return cp.Note
}

// initLog proposes the init entry (genesis with signer 1, 1 of 1) through
// the leader.
func initLog(t *testing.T, l *replMember) {
	t.Helper()
	g, err := descriptor.Genesis(descriptor.TrustRoots{Signers: []descriptor.Signer{signerOf(1)},
		Quorum: descriptor.Quorum{M: 1, N: 1}}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	fx, err := committer.GenesisEffects(g)
	if err != nil {
		t.Fatal(err)
	}
	k, err := tiles.NewLogKey("example.com/ron")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), consensustest.WaitBound)
	defer cancel()
	if err := reglog.Propose(ctx, l.plane, reglog.Entry{Init: &reglog.Init{Origin: k.Origin(), Key: k.SignerKey()},
		Effects: fx}); err != nil {
		t.Fatal(err)
	}
}

func TestReplicatedRegistry(t *testing.T) {
	ids := []string{"a", "b", "c"}
	ms := make([]*replMember, len(ids))
	planes := make([]*consensus.Plane, len(ids))
	for i, id := range ids {
		ms[i] = newReplMember(t, id)
		planes[i] = ms[i].plane
		if got := ms[i].com.Load().WriteUnready(); !contains(got, committer.ReasonNoLog) {
			t.Fatalf("%s: an empty replicated registry is write-ready: %v", id, got)
		}
	}
	consensustest.Planes(t, ids, planes)
	leader := leaderOf(t, ms)
	initLog(t, leader)
	for _, m := range ms {
		consensustest.Eventually(t, m.id+" holds genesis", func() bool {
			h := m.com.Load().Head()
			return h != nil && h.Version == 0 && !contains(m.com.Load().WriteUnready(), committer.ReasonNoLog)
		})
	}

	// Commits through the leader reach every member.
	var acked []registryapi.Committed
	for i := range 3 {
		c, err := commitOn(t, leader, fmt.Sprintf("change %d", i))
		if err != nil {
			t.Fatal(err)
		}
		acked = append(acked, c)
	}
	converged(t, ms, 3)

	// A follower refuses to write itself: its committer answers no_quorum,
	// nothing written.
	var follower *replMember
	for _, m := range ms {
		if m != leader {
			follower = m
		}
	}
	_, err := commitOn(t, follower, "on a follower")
	if he := httpx.AsError(err); he.Code != httpx.CodeNoQuorum || he.Details["outcome"] != httpx.OutcomeNotWritten {
		t.Fatalf("a follower's write: %v", err)
	}

	// The follower's read snapshot follows the log: proposals too.
	h := leader.com.Load().Head()
	set := nextSet(t, h, "open proposal")
	ctx, cancel := context.WithTimeout(context.Background(), consensustest.WaitBound)
	defer cancel()
	p, err := leader.com.Load().Propose(ctx, set, "")
	if err != nil {
		t.Fatal(err)
	}
	consensustest.Eventually(t, "the follower sees the proposal", func() bool {
		v, err := follower.com.Load().Proposal(p.ProposalID)
		return err == nil && v.Status == committer.StatusPending
	})

	// The leader goes: a new one commits on, nothing acknowledged is lost.
	consensustest.Detach(t, leader.plane)
	var rest []*replMember
	for _, m := range ms {
		if m != leader {
			rest = append(rest, m)
		}
	}
	next := leaderOf(t, rest)
	var c registryapi.Committed
	consensustest.Eventually(t, "a commit through the new leader", func() bool {
		c, err = commitOn(t, next, "after the change of leader")
		return err == nil
	})
	if c.Version != 4 {
		t.Fatalf("the new leader committed version %d, want 4 (after %v)", c.Version, acked)
	}
	converged(t, rest, 4)
	for _, a := range acked {
		rec, err := next.log.Read(a.Version)
		if err != nil || !bytes.Contains(rec.Artifact, []byte(a.PayloadB3)) {
			t.Fatalf("acknowledged version %d lost: %v", a.Version, err)
		}
	}
	for _, m := range rest {
		if got := m.committed(); len(got) == 0 || got[len(got)-1] != 4 {
			t.Fatalf("%s: OnCommit saw %v", m.id, got)
		}
	}
}

// converged waits until every member holds HEAD head, then checks that
// their logs, registry.db and checkpoints are identical, and that their
// committers' read views (followed entry by entry on a follower) agree:
// the same HEAD body and open proposals.
func converged(t *testing.T, ms []*replMember, head uint64) {
	t.Helper()
	for _, m := range ms {
		consensustest.Eventually(t, fmt.Sprintf("%s at HEAD %d", m.id, head), func() bool {
			h := m.com.Load().Head()
			return h != nil && h.Version == head
		})
	}
	log0, db0, cp0 := logBytes(t, ms[0]), dbBytes(t, ms[0]), checkpoint(t, ms[0])
	for _, m := range ms[1:] {
		if logBytes(t, m) != log0 {
			t.Fatalf("%s: segment log differs from %s's", m.id, ms[0].id)
		}
		if db := dbBytes(t, m); db != db0 {
			t.Fatalf("%s: registry.db differs from %s's:\n%s\n%s", m.id, ms[0].id, db, db0)
		}
		if !bytes.Equal(checkpoint(t, m), cp0) {
			t.Fatalf("%s: checkpoint differs", m.id)
		}
		a, b := ms[0].com.Load(), m.com.Load()
		if !bytes.Equal(a.Head().Body, b.Head().Body) || !reflect.DeepEqual(a.OpenProposals(), b.OpenProposals()) {
			t.Fatalf("%s: read view differs from %s's: %s %v / %s %v", m.id, ms[0].id, b.Head().Body, b.OpenProposals(),
				a.Head().Body, a.OpenProposals())
		}
	}
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}
