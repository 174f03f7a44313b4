package registry

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rs/zerolog"

	"github.com/ronhq/ron/roles/registry/committer"
	"github.com/ronhq/ron/roles/registry/registryapi"
	"github.com/ronhq/ron/roles/registry/registryapi/descriptor"
	"github.com/ronhq/ron/roles/registry/regstore"
	"github.com/ronhq/ron/roles/registry/segment"
	"github.com/ronhq/ron/roles/registry/tiles"
	"github.com/ronhq/ron/store/kv"
	"github.com/ronhq/ron/store/kv/memkv"
)

// flakyKV fails every Update while fail is set.
type flakyKV struct {
	kv.DB
	fail atomic.Bool
}

var errFlaky = errors.New("injected tlog.db failure")

func (f *flakyKV) Update(ctx context.Context, fn func(kv.Tx) error) error {
	if f.fail.Load() {
		return errFlaky
	}
	return f.DB.Update(ctx, fn)
}

// bench is a committer and a checkpointer over memory stores, with the
// dev-style signer k (quorum 1 of 1), for tests inside a synctest bubble.
type bench struct {
	com  *committer.Committer
	ckpt *checkpointer
	tree *tiles.Tree
	tdb  *flakyKV
	log  *segment.Log
	k    signerKey
	wg   sync.WaitGroup
	stop context.CancelFunc
}

func newBench(t *testing.T, cfg Config) *bench {
	t.Helper()
	b := &bench{tdb: &flakyKV{DB: memkv.New()}, k: newSigners(t, 1)[0]}
	var err error
	b.log, _, err = segment.Open("/log", segment.Options{FS: segment.NewMemFS(), DurableHead: -1})
	if err != nil {
		t.Fatal(err)
	}
	g, err := descriptor.Genesis((&regstore.DevSigner{ID: b.k.id, Key: b.k.priv}).TrustRoots(), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	b.com, err = committer.Open(t.Context(), committer.Options{Log: b.log, DB: memkv.New(),
		OnCommit: func(registryapi.Committed) { b.ckpt.notify() }}, g, segment.Recovery{})
	if err != nil {
		t.Fatal(err)
	}
	key, _ := tiles.NewLogKey("")
	if b.tree, err = tiles.OpenTree(t.Context(), b.tdb, key); err != nil {
		t.Fatal(err)
	}
	b.ckpt = &checkpointer{log: b.log, tree: b.tree, com: b.com, cfg: func() Config { return cfg }, now: time.Now,
		met: roleMetrics{testOptions(t, cfg, "").Metrics}, logger: zerolog.Nop(), fail: func(*mismatch) {},
		published: func() {}, wake: make(chan struct{}, 1), progress: newSignal()}
	ctx, cancel := context.WithCancel(context.Background())
	b.stop = cancel
	for _, run := range []func(context.Context) error{b.com.Run, b.ckpt.run} {
		b.wg.Add(1)
		go func() {
			defer b.wg.Done()
			_ = run(ctx)
		}()
	}
	t.Cleanup(func() {
		b.stop()
		b.wg.Wait()
		_ = b.log.Close()
	})
	synctest.Wait() // the committer runs: writes are ready
	return b
}

// commit commits the next version through the committer directly.
func (b *bench) commit(t *testing.T) {
	t.Helper()
	ctx := t.Context()
	set, err := descriptor.ParseSet(nextPayload(t, b.com.Head().Set, "bench", time.Now()), descriptor.DefaultLimits(), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	p, err := b.com.Propose(ctx, set, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.com.Approve(ctx, p.ProposalID, descriptor.Sign(b.k.priv, b.k.id, p.PayloadB3, time.Now()), ""); err != nil {
		t.Fatal(err)
	}
	if _, err := b.com.Commit(ctx, p.ProposalID, ""); err != nil {
		t.Fatal(err)
	}
}

// TestCheckpointLag: while tlog.db refuses writes, the uncovered commit
// turns writes unready (storage at once, sticky; checkpoint_lag once
// checkpoint_max_lag has passed); when it heals, the retry covers HEAD and
// checkpoint_lag clears.
func TestCheckpointLag(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := testConfig()
		b := newBench(t, cfg)
		if b.tree.Size() != 1 {
			t.Fatalf("genesis not covered: size %d", b.tree.Size())
		}
		b.tdb.fail.Store(true)
		b.commit(t)
		synctest.Wait()
		if got := b.com.WriteUnready(); !slices.Contains(got, committer.ReasonStorage) ||
			slices.Contains(got, committer.ReasonCheckpointLag) {
			t.Fatalf("after a failed round: %v", got)
		}
		time.Sleep(cfg.CheckpointMaxLag + time.Second)
		synctest.Wait()
		if got := b.com.WriteUnready(); !slices.Contains(got, committer.ReasonCheckpointLag) {
			t.Fatalf("after %v uncovered: %v", cfg.CheckpointMaxLag, got)
		}
		b.tdb.fail.Store(false)
		time.Sleep(checkpointRetry.Max + time.Second)
		synctest.Wait()
		if got := b.com.WriteUnready(); b.tree.Size() != 2 || slices.Contains(got, committer.ReasonCheckpointLag) ||
			!slices.Contains(got, committer.ReasonStorage) {
			t.Fatalf("after healing: size %d, unready %v", b.tree.Size(), got)
		}
	})
}

// TestCheckpointerCovers: every commit ends up covered by a checkpoint,
// with checkpoints_total counting the signed rounds.
func TestCheckpointerCovers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBench(t, testConfig())
		for range 5 {
			b.commit(t)
		}
		synctest.Wait()
		if b.tree.Size() != 6 || b.ckpt.halted.Load() || !b.ckpt.pending.IsZero() {
			t.Fatalf("size %d, halted %v", b.tree.Size(), b.ckpt.halted.Load())
		}
		if err := b.tree.VerifyCheckpoint(); err != nil {
			t.Fatal(err)
		}
		if b.ckpt.age() != 0 {
			t.Fatalf("age %v on a frozen clock", b.ckpt.age())
		}
	})
}

// TestExtendTreeAhead: a checkpoint beyond HEAD means the log lost a
// covered version.
func TestExtendTreeAhead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBench(t, testConfig())
		b.commit(t)
		synctest.Wait()
		if _, err := regstore.ExtendTree(t.Context(), b.tree, b.log, 0); !errors.Is(err, regstore.ErrTreeAhead) {
			t.Fatalf("got %v", err)
		}
	})
}
