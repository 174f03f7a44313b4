package committer

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rs/zerolog"
	"go.uber.org/goleak"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/roles/registry/registryapi"
	"github.com/ronhq/ron/roles/registry/registryapi/descriptor"
	"github.com/ronhq/ron/roles/registry/segment"
	"github.com/ronhq/ron/runtime"
	"github.com/ronhq/ron/store/kv"
	"github.com/ronhq/ron/store/kv/bolt"
	"github.com/ronhq/ron/store/kv/memkv"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// backend names the stores a test env runs on.
type backend string

const (
	memBackend  backend = "memkv+MemFS"
	boltBackend backend = "bolt+OSFS"
)

var backends = []backend{memBackend, boltBackend}

// testKey is a deterministic Ed25519 key (seed = 32 bytes of b).
func testKey(b byte) ed25519.PrivateKey {
	return ed25519.NewKeyFromSeed(bytes.Repeat([]byte{b}, ed25519.SeedSize))
}

// signerID is the id of testKey(b).
func signerID(b byte) string { return fmt.Sprintf("org:test#k%d", b) }

// hookDB wraps a kv.DB so tests can hold or fail the next Update.
type hookDB struct {
	kv.DB
	mu   sync.Mutex
	hold chan struct{} // the next Update waits until it is closed
	fail error         // every Update fails with it while set
}

func (h *hookDB) Update(ctx context.Context, fn func(kv.Tx) error) error {
	h.mu.Lock()
	hold, fail := h.hold, h.fail
	h.hold = nil
	h.mu.Unlock()
	if hold != nil {
		select {
		case <-hold:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if fail != nil {
		return fail
	}
	return h.DB.Update(ctx, fn)
}

// holdNext makes the next Update wait; closing the returned channel
// releases it.
func (h *hookDB) holdNext() chan struct{} {
	ch := make(chan struct{})
	h.mu.Lock()
	h.hold = ch
	h.mu.Unlock()
	return ch
}

func (h *hookDB) setFail(err error) {
	h.mu.Lock()
	h.fail = err
	h.mu.Unlock()
}

// env is one committer over its stores, with its Run worker.
type env struct {
	t       *testing.T
	backend backend
	dir     string
	memfs   *segment.MemFS
	fault   *segment.FaultFS
	inner   kv.DB
	db      *hookDB
	log     *segment.Log
	rec     segment.Recovery
	c       *Committer
	g       *runtime.TaskGroup
	m       *runtime.Metrics
	lim     Limits
	qcap    int
	logw    io.Writer     // audit log destination; nil = discard
	skew    time.Duration // added to time.Now by the env's clock
	clockMu sync.Mutex

	mu      sync.Mutex
	commits []registryapi.Committed // OnCommit calls
	onHold  chan struct{}
}

// newEnv builds an env with genesis signers 1..3, quorum 2 of 3, and
// starts Run. Call it inside a synctest bubble.
func newEnv(t *testing.T, b backend, opts ...func(*env)) *env {
	t.Helper()
	e := &env{t: t, backend: b, m: runtime.NewMetrics(nil), lim: DefaultLimits()}
	for _, o := range opts {
		o(e)
	}
	if b == boltBackend {
		e.dir = t.TempDir()
	} else {
		e.dir = "/reg"
		e.memfs = segment.NewMemFS()
	}
	e.open(true)
	return e
}

// now is the env's clock: the bubble's time plus skew.
func (e *env) now() time.Time {
	e.clockMu.Lock()
	defer e.clockMu.Unlock()
	return time.Now().Add(e.skew)
}

func (e *env) shiftClock(d time.Duration) {
	e.clockMu.Lock()
	e.skew += d
	e.clockMu.Unlock()
}

// segFS returns the fault-injecting file layer over the backend's FS.
func (e *env) segFS() segment.FS {
	if e.fault == nil {
		var inner segment.FS = segment.OSFS{}
		if e.memfs != nil {
			inner = e.memfs
		}
		e.fault = segment.NewFaultFS(inner)
	}
	return e.fault
}

// openDB opens (or keeps) registry.db.
func (e *env) openDB() {
	if e.inner != nil {
		return
	}
	if e.backend == boltBackend {
		db, err := bolt.Open(filepath.Join(e.dir, "registry.db"), bolt.Options{})
		if err != nil {
			e.t.Fatal(err)
		}
		e.inner = db
	} else {
		e.inner = memkv.New()
	}
	e.db = &hookDB{DB: e.inner}
}

// open opens the log and the committer (with genesis when first) and
// starts Run.
func (e *env) open(first bool) {
	e.t.Helper()
	ctx := context.Background()
	e.openDB()
	dh, err := DurableHead(ctx, e.db)
	if err != nil {
		e.t.Fatal(err)
	}
	e.log, e.rec, err = segment.Open(filepath.Join(e.dir, "log"), segment.Options{
		FS: e.segFS(), SegmentRecords: 256, Check: CheckRecord, DurableHead: dh})
	if err != nil {
		e.t.Fatal(err)
	}
	var g *descriptor.Set
	if first {
		g = e.genesis()
	}
	e.c, err = Open(ctx, e.options(), g, e.rec)
	if err != nil {
		e.t.Fatal(err)
	}
	e.start()
}

func (e *env) options() Options {
	o := Options{Log: e.log, DB: e.db, Limits: func() Limits { return e.lim }, Now: e.now,
		Metrics: e.m, Logger: zerolog.Nop(), OnCommit: e.onCommit}
	if e.logw != nil {
		o.Logger = zerolog.New(e.logw)
	}
	o.QueueCapacity.Proposals, o.QueueCapacity.Approvals, o.QueueCapacity.Commits = e.qcap, e.qcap, e.qcap
	return o
}

// start runs the committer under a task group.
func (e *env) start() {
	e.g = runtime.NewTaskGroup(roleName, zerolog.Nop(), e.m)
	e.g.Go("registry-committer", e.c.Run)
	synctest.Wait() // Run is idle: writes are ready
}

// stop stops Run and closes the log (and a bolt DB).
func (e *env) stop() {
	e.t.Helper()
	e.g.Stop(context.Background())
	if err := e.log.Close(); err != nil {
		e.t.Fatal(err)
	}
	if e.backend == boltBackend {
		if err := e.inner.Close(); err != nil {
			e.t.Fatal(err)
		}
		e.inner = nil
	}
}

// restart stops and re-opens everything on the same stores.
func (e *env) restart() {
	e.t.Helper()
	e.stop()
	if e.fault != nil {
		e.fault.Reset()
	}
	if e.db != nil {
		e.db.setFail(nil)
	}
	e.open(false)
}

// close stops the env for good.
func (e *env) close() {
	e.stop()
	if e.inner != nil {
		_ = e.inner.Close()
	}
}

func (e *env) onCommit(c registryapi.Committed) {
	e.mu.Lock()
	e.commits = append(e.commits, c)
	hold := e.onHold
	e.mu.Unlock()
	if hold != nil {
		<-hold
	}
}

func (e *env) committedCalls() []registryapi.Committed {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]registryapi.Committed(nil), e.commits...)
}

// genesis is version 0 with signers 1..3 and quorum 2 of 3.
func (e *env) genesis() *descriptor.Set {
	var tr descriptor.TrustRoots
	for b := byte(1); b <= 3; b++ {
		tr.Signers = append(tr.Signers, signer(b))
	}
	tr.Quorum = descriptor.Quorum{M: 2, N: 3}
	g, err := descriptor.Genesis(tr, e.now())
	if err != nil {
		e.t.Fatal(err)
	}
	return g
}

func signer(b byte) descriptor.Signer {
	pub := testKey(b).Public().(ed25519.PublicKey)
	return descriptor.Signer{ID: signerID(b), Algo: descriptor.AlgoEd25519, Pubkey: pub,
		PubkeyB64: base64.StdEncoding.EncodeToString(pub)}
}

// payload builds a set at version with prev, signers keys and quorum m.
func (e *env) payload(version uint64, prev, note string, m int, keys ...byte) *descriptor.Set {
	e.t.Helper()
	if len(keys) == 0 {
		keys = []byte{1, 2, 3}
	}
	if m == 0 {
		m = 2
	}
	items := []any{}
	for _, k := range keys {
		s := signer(k)
		items = append(items, map[string]any{"kind": "signer", "id": s.ID, "algo": "ed25519", "pubkey": s.PubkeyB64})
	}
	items = append(items, map[string]any{"kind": "quorum", "id": "quorum", "m": m, "n": len(keys)})
	raw, err := json.Marshal(map[string]any{"version": version, "prev_hash": prev,
		"created_at": descriptor.FormatTime(e.now()), "note": note, "items": items})
	if err != nil {
		e.t.Fatal(err)
	}
	s, err := descriptor.ParseSet(raw, e.lim.Limits, e.now())
	if err != nil {
		e.t.Fatal(err)
	}
	return s
}

// next builds a set extending the current HEAD.
func (e *env) next(note string, keys ...byte) *descriptor.Set {
	h := e.c.Head()
	return e.payload(h.Version+1, h.PayloadB3, note, 0, keys...)
}

func (e *env) sign(k byte, s *descriptor.Set) descriptor.Approval {
	return descriptor.Sign(testKey(k), signerID(k), s.B3, e.now())
}

func (e *env) propose(s *descriptor.Set) (registryapi.Proposed, error) {
	return e.c.Propose(context.Background(), s, "corr-propose")
}

func (e *env) approve(s *descriptor.Set, k byte) (registryapi.ApprovalResult, error) {
	return e.c.Approve(context.Background(), descriptor.ProposalID(s.B3), e.sign(k, s), "corr-approve")
}

func (e *env) commit(s *descriptor.Set) (registryapi.Committed, error) {
	return e.c.Commit(context.Background(), descriptor.ProposalID(s.B3), "corr-commit")
}

// must returns v, failing the test on err.
func must[T any](t *testing.T) func(v T, err error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

func (e *env) mustPropose(s *descriptor.Set) registryapi.Proposed {
	return must[registryapi.Proposed](e.t)(e.propose(s))
}

func (e *env) mustApprove(s *descriptor.Set, k byte) registryapi.ApprovalResult {
	return must[registryapi.ApprovalResult](e.t)(e.approve(s, k))
}

func (e *env) mustCommit(s *descriptor.Set) registryapi.Committed {
	return must[registryapi.Committed](e.t)(e.commit(s))
}

// proposeApproved proposes s and approves it with keys (default 1 and 2).
func (e *env) proposeApproved(s *descriptor.Set, keys ...byte) {
	e.t.Helper()
	if len(keys) == 0 {
		keys = []byte{1, 2}
	}
	e.mustPropose(s)
	for _, k := range keys {
		e.mustApprove(s, k)
	}
}

// cycle runs propose → approve 1,2 → commit of a set extending HEAD.
func (e *env) cycle(note string, keys ...byte) (*descriptor.Set, registryapi.Committed) {
	e.t.Helper()
	s := e.next(note, keys...)
	e.proposeApproved(s)
	return s, e.mustCommit(s)
}

// metric returns the value of series name{role="registry",labels}.
func (e *env) metric(name string, labels ...string) float64 {
	return e.m.Values()[runtime.MetricName(name, append([]string{"role", roleName}, labels...)...)]
}

// want describes an expected *httpx.Error; nil details entries are not
// checked.
type want struct {
	status  int
	code    string
	details map[string]any
	retry   int
}

func checkErr(t *testing.T, err error, w want) {
	t.Helper()
	var he *httpx.Error
	if !errors.As(err, &he) {
		t.Fatalf("error %v (%T), want %d %s", err, err, w.status, w.code)
	}
	if he.Status != w.status || he.Code != w.code {
		t.Fatalf("got %d %s (%v), want %d %s", he.Status, he.Code, he, w.status, w.code)
	}
	for k, v := range w.details {
		if got := he.Details[k]; fmt.Sprint(got) != fmt.Sprint(v) {
			t.Fatalf("details[%s] = %v, want %v (%v)", k, got, v, he.Details)
		}
	}
	if w.retry != 0 && he.RetryAfter != w.retry {
		t.Fatalf("Retry-After %d, want %d", he.RetryAfter, w.retry)
	}
}
