package registry

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"hash/crc32"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rs/zerolog"

	"github.com/ronhq/ron/roles/registry/committer"
	"github.com/ronhq/ron/roles/registry/regstore"
	"github.com/ronhq/ron/roles/registry/segment"
	"github.com/ronhq/ron/roles/registry/tiles"
	"github.com/ronhq/ron/store/kv"
	"github.com/ronhq/ron/store/kv/memkv"
)

// tamperRecord rewrites version v's artifact in its segment file with
// edit (which must keep the length), recomputing the record's CRC when
// fixCRC is set.
func tamperRecord(t *testing.T, dataDir string, v uint64, segRecords int, edit func([]byte), fixCRC bool) {
	t.Helper()
	first := v / uint64(segRecords) * uint64(segRecords)
	path := filepath.Join(dataDir, regstore.DirName, regstore.LogDirName, segment.SegmentName(first))
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	off := segment.HeaderSize
	for ver := first; ; ver++ {
		l := int(binary.BigEndian.Uint32(b[off:]))
		body := b[off+segment.RecordOverhead : off+segment.RecordOverhead+l]
		if ver == v {
			c := int(body[8])
			edit(body[9+c:])
			if fixCRC {
				binary.BigEndian.PutUint32(b[off+4:], crc32.Checksum(body, crc32.MakeTable(crc32.Castagnoli)))
			}
			break
		}
		off += segment.RecordOverhead + l
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// replaceOnce edits the first occurrence of old (same length as repl).
func replaceOnce(old, repl string) func([]byte) {
	return func(a []byte) {
		i := bytes.Index(a, []byte(old))
		if i < 0 || len(old) != len(repl) {
			panic("tamper target not found")
		}
		copy(a[i:], repl)
	}
}

// flipSig changes one character in the middle of the first approval's sig.
func flipSig(a []byte) {
	i := bytes.Index(a, []byte(`"sig":"`)) + len(`"sig":"`) + 20
	if a[i] == 'A' {
		a[i] = 'B'
	} else {
		a[i] = 'A'
	}
}

// TestDeepVerifierTamper: records altered after they were verified and
// checkpointed are each caught by the start-up full pass at their
// version, with the check that failed named in the error log, the
// failure counter and the status; writes turn unready and the verified
// prefix ends before the first damage.
func TestDeepVerifierTamper(t *testing.T) {
	const segRecords, last = 256, 300
	fastVerifier(t)
	signers := newSigners(t, 3)
	dir := t.TempDir()
	seedLog(t, dir, signers, 2, last, segRecords)
	cfg := testConfig()
	cfg.SegmentRecords = segRecords
	n := startNode(t, testOptions(t, cfg, dir), signers, 2)
	n.waitVerified()
	n.stop()
	want := map[uint64]string{}
	for _, tc := range []struct {
		v     uint64
		edit  func([]byte)
		fix   bool
		check string
	}{
		{100, replaceOnce(`"seed-100"`, `"teed-100"`), true, checkPayloadB3},
		{120, flipSig, true, checkSignature},
		{140, replaceOnce(`"prev_hash":"b3:`, `"prev_hash":"b4:`), true, checkCanonical},
		{160, replaceOnce(`"committed_at":"2`, `"committed_at":"1`), true, checkCommittedAt},
		{200, replaceOnce(`"seed-200"`, `"teed-200"`), false, checkCRC},
		{280, flipSig, true, checkSignature}, // in the final segment
	} {
		tamperRecord(t, dir, tc.v, segRecords, tc.edit, tc.fix)
		want[tc.v] = tc.check
	}
	logs := &syncBuffer{}
	opt := testOptions(t, cfg, dir)
	opt.Log = zerolog.New(logs)
	again := startNode(t, opt, signers, 2)
	waitFor(t, again.ver.progress, "the full pass", func() bool {
		f := again.lastFailure.Load()
		return f != nil && f.m.version == 280
	})
	if got := logs.failures(t); !maps.Equal(got, want) {
		t.Fatalf("failures logged %v, want %v", got, want)
	}
	if !slices.Contains(again.com.WriteUnready(), committer.ReasonVerifyFailed) || again.ver.Through() != 99 {
		t.Fatalf("write unready %v, verified through %d", again.com.WriteUnready(), again.ver.Through())
	}
	st := again.statusBody()
	if st.WriteReady || st.Verifier.LastFailure == nil || st.Verifier.LastFailure.Version != 280 ||
		st.Verifier.LastFailure.Check != checkSignature {
		t.Fatalf("status %+v / %+v", st, st.Verifier.LastFailure)
	}
	for check, count := range map[string]float64{checkPayloadB3: 1, checkSignature: 2, checkCanonical: 1, checkCommittedAt: 1, checkCRC: 1} {
		if v := again.metric(`ron_audit_chain_verify_failures_total{role="registry",check="` + check + `"}`); v != count {
			t.Fatalf("%s failures %v, want %v", check, v, count)
		}
	}
}

// syncBuffer collects log lines from several goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// failures returns version → check of every verify.failed log line.
func (b *syncBuffer) failures(t *testing.T) map[uint64]string {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	out := map[uint64]string{}
	for _, line := range bytes.Split(b.buf.Bytes(), []byte("\n")) {
		var ev struct {
			Event   string `json:"event"`
			Version uint64 `json:"version"`
			Check   string `json:"check"`
		}
		if json.Unmarshal(line, &ev) == nil && ev.Event == eventVerifyFailed {
			out[ev.Version] = ev.Check
		}
	}
	return out
}

// TestRecoveryRefusesDamagedTail: a record in the final segment whose CRC
// no longer matches lies at or below the durable HEAD, so recovery fails
// start-up rather than cut acknowledged data.
func TestRecoveryRefusesDamagedTail(t *testing.T) {
	dir := t.TempDir()
	signers := newSigners(t, 1)
	seedLog(t, dir, signers, 1, 20, 256)
	n := startNode(t, testOptions(t, testConfig(), dir), signers, 1)
	n.stop()
	tamperRecord(t, dir, 7, 256, replaceOnce(`"seed-7"`, `"teed-7"`), false)
	err := New(testOptions(t, testConfig(), dir)).Start(t.Context())
	if err == nil || !strings.Contains(err.Error(), "recover log") || !strings.Contains(err.Error(), "crc") {
		t.Fatalf("Start: %v", err)
	}
}

// TestTailTamper: damage in the tail (not yet covered by a checkpoint)
// is caught by Start's tail check at the same version; reads still work.
func TestTailTamper(t *testing.T) {
	dir := t.TempDir()
	signers := newSigners(t, 2)
	seedLog(t, dir, signers, 1, 20, 256)
	tamperRecord(t, dir, 7, 256, flipSig, true)
	n := startNode(t, testOptions(t, testConfig(), dir), signers, 1)
	f := n.lastFailure.Load()
	if f == nil || f.m.version != 7 || f.m.check != checkSignature {
		t.Fatalf("tail failure %+v", f)
	}
	if !n.ckpt.halted.Load() || n.tree.Size() != 0 {
		t.Fatalf("a damaged tail was checkpointed: size %d", n.tree.Size())
	}
	if code, _ := n.get("/registry/3"); code != 200 {
		t.Fatalf("reads must still work: %d", code)
	}
	if n.LastError() == "" {
		t.Fatalf("no last_error while writes are unready: %v", n.Details())
	}
}

// TestSplitView: when the stored tiles no longer give the previous
// checkpoint's root, the checkpointer refuses to sign and the registry
// turns write-unready (verify_failed, check split_view).
func TestSplitView(t *testing.T) {
	n := startNode(t, testOptions(t, testConfig(), ""), nil, 0)
	n.commit("a")
	n.commit("b")
	n.waitVerified() // the verifier has checked this checkpoint: it will not look at the tiles again
	size := n.tree.Size()
	err := n.st.TlogDB.Update(t.Context(), func(tx kv.Tx) error {
		b := tx.Bucket("tiles")
		key := make([]byte, 9) // level 0, tile 0
		tile := bytes.Clone(b.Get(key))
		tile[0] ^= 1
		return b.Put(key, tile)
	})
	if err != nil {
		t.Fatal(err)
	}
	n.commit("c")
	waitFor(t, n.ckpt.progress, "the refused checkpoint", func() bool { return n.ckpt.halted.Load() })
	f := n.lastFailure.Load().m
	if f.check != checkSplitView || f.version != size {
		t.Fatalf("failure %v, want split_view at %d", f, size)
	}
	if n.tree.Size() != size || !slices.Contains(n.com.WriteUnready(), committer.ReasonVerifyFailed) {
		t.Fatalf("size %d, unready %v", n.tree.Size(), n.com.WriteUnready())
	}
	if v := n.metric(`ron_audit_chain_verify_failures_total{role="registry",check="split_view"}`); v != 1 {
		t.Fatalf("split_view failures %v", v)
	}
}

// memChain is a log of versions 0…last on a MemFS with a tree covering
// it, for verifier tests inside a synctest bubble.
func memChain(t *testing.T, recs []segment.Record) (*segment.MemFS, *segment.Log, *tiles.Tree) {
	t.Helper()
	fs := segment.NewMemFS()
	l, _, err := segment.Open("/log", segment.Options{FS: fs, SegmentRecords: 256, DurableHead: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	if err := l.Append(recs); err != nil {
		t.Fatal(err)
	}
	key, _ := tiles.NewLogKey("")
	tree, err := tiles.OpenTree(t.Context(), memkv.New(), key)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := regstore.ExtendTree(t.Context(), tree, l, uint64(len(recs)-1)); err != nil {
		t.Fatal(err)
	}
	return fs, l, tree
}

// TestVerifierSlices runs a full pass on a clock that advances 5 ms per
// reading: slices end at verify_slice (20 ms, four versions) and each is
// followed by a pause four times as long.
func TestVerifierSlices(t *testing.T) {
	recs := seedRecords(t, newSigners(t, 1), 1, 39)
	synctest.Test(t, func(t *testing.T) {
		_, l, tree := memChain(t, recs)
		cfg := testConfig()
		var failures []*mismatch
		v := newVerifier(l, tree, func() Config { return cfg }, roleMetrics{testOptions(t, cfg, "").Metrics},
			func(m *mismatch) { failures = append(failures, m) })
		fake := time.Now()
		v.now = func() time.Time { fake = fake.Add(5 * time.Millisecond); return fake }
		start := time.Now()
		v.fullPass(t.Context())
		if got := time.Since(start); got != 10*80*time.Millisecond {
			t.Fatalf("paused %v, want 10 slices × 80 ms", got)
		}
		if len(failures) != 0 || v.Through() != 39 {
			t.Fatalf("failures %v, through %d", failures, v.Through())
		}
	})
}

// TestVerifierFullInterval: damage made after the start-up pass is found
// by the next full pass, verify_full_interval later.
func TestVerifierFullInterval(t *testing.T) {
	recs := seedRecords(t, newSigners(t, 1), 1, 20)
	synctest.Test(t, func(t *testing.T) {
		fs, l, tree := memChain(t, recs)
		cfg := testConfig()
		found := make(chan *mismatch, 8)
		v := newVerifier(l, tree, func() Config { return cfg }, roleMetrics{testOptions(t, cfg, "").Metrics},
			func(m *mismatch) { found <- m })
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error)
		go func() { done <- v.run(ctx) }()
		synctest.Wait()
		first := v.passStarted.Load()
		if v.Through() != 20 || len(found) != 0 {
			t.Fatalf("start-up pass: through %d, %d failures", v.Through(), len(found))
		}
		path := "/log/" + segment.SegmentName(0)
		b, err := fs.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		replaceOnce(`"seed-9"`, `"seed-8"`)(b)
		if err := fs.WriteFile(path, b); err != nil {
			t.Fatal(err)
		}
		time.Sleep(cfg.VerifyFullInterval - time.Second)
		synctest.Wait()
		if len(found) != 0 {
			t.Fatal("a full pass ran before verify_full_interval")
		}
		time.Sleep(2 * time.Second)
		synctest.Wait()
		if got := time.Duration(v.passStarted.Load() - first); got != cfg.VerifyFullInterval {
			t.Fatalf("second pass %v after the first", got)
		}
		if m := <-found; m.version != 9 || m.check != checkCRC || v.Through() != 8 {
			t.Fatalf("found %v, through %d", m, v.Through())
		}
		cancel()
		<-done
	})
}

// TestVerifierIncremental: each new checkpoint is checked and the
// versions it newly covers are verified.
func TestVerifierIncremental(t *testing.T) {
	n := startNode(t, testOptions(t, testConfig(), ""), nil, 0)
	n.waitVerified()
	for range 5 {
		n.commit("more")
	}
	n.waitVerified()
	if n.ver.Through() != 5 || n.lastFailure.Load() != nil {
		t.Fatalf("verified through %d, failure %v", n.ver.Through(), n.lastFailure.Load())
	}
}

// TestCheckRecordAnchors: genesis must carry the zero prev_hash, and a
// version follows its link.
func TestCheckRecordAnchors(t *testing.T) {
	recs := seedRecords(t, newSigners(t, 2), 2, 3)
	stranger, _ := checkRecord(0, seedRecords(t, newSigners(t, 2), 2, 0)[0].Artifact, nil, nil)
	g, m := checkRecord(0, recs[0].Artifact, nil, nil)
	if m != nil || g == nil {
		t.Fatalf("genesis: %v", m)
	}
	one, m := checkRecord(1, recs[1].Artifact, g, nil)
	if m != nil {
		t.Fatalf("version 1: %v", m)
	}
	for _, tc := range []struct {
		name  string
		v     uint64
		art   []byte
		prev  *link
		check string
	}{
		{"version mismatch", 2, recs[3].Artifact, one, checkVersion},
		{"skipped link", 3, recs[3].Artifact, one, checkVersion},
		{"genesis out of place", 1, recs[0].Artifact, g, checkVersion},
		{"not json", 1, []byte("{"), g, checkCanonical},
		{"not canonical", 1, append([]byte(" "), recs[1].Artifact...), g, checkCanonical},
		{"good link", 2, recs[2].Artifact, &link{version: 1, b3: one.b3, committedAt: one.committedAt, signers: g.signers}, ""},
		{"other signer set", 2, recs[2].Artifact, &link{version: 1, b3: one.b3, committedAt: one.committedAt,
			signers: stranger.signers}, checkSignature},
		{"broken link", 2, recs[2].Artifact, &link{version: 1, b3: g.b3, committedAt: one.committedAt, signers: g.signers},
			checkPrevHash},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, m := checkRecord(tc.v, tc.art, tc.prev, nil)
			if tc.check == "" {
				if m != nil {
					t.Fatalf("unexpected %v", m)
				}
				return
			}
			if m == nil || m.check != tc.check {
				t.Fatalf("got %v, want %s", m, tc.check)
			}
		})
	}
}

// TestReadFailure maps segment damage to check labels.
func TestReadFailure(t *testing.T) {
	if m := readFailure(3, &segment.CorruptError{Check: segment.CheckVersion}); m == nil || m.check != checkVersion {
		t.Fatalf("version: %v", m)
	}
	if m := readFailure(3, &segment.CorruptError{Check: segment.CheckLength}); m == nil || m.check != checkCRC {
		t.Fatalf("length: %v", m)
	}
	if m := readFailure(3, segment.ErrPruned); m != nil {
		t.Fatalf("pruned is no verdict: %v", m)
	}
}
