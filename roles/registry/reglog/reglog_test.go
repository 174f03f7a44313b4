package reglog

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/ronhq/ron/roles/registry/committer"
	"github.com/ronhq/ron/roles/registry/registryapi/descriptor"
	"github.com/ronhq/ron/roles/registry/segment"
	"github.com/ronhq/ron/roles/registry/tiles"
	"github.com/ronhq/ron/store/kv"
	"github.com/ronhq/ron/store/kv/memkv"
)

// genesisFx is the effects of a genesis with one signer.
func genesisFx(t testing.TB) committer.Effects {
	t.Helper()
	pub := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{7}, 32)).Public().(ed25519.PublicKey)
	tr := descriptor.TrustRoots{Signers: []descriptor.Signer{{ID: "org:test#k7", Algo: descriptor.AlgoEd25519,
		Pubkey: pub, PubkeyB64: base64.StdEncoding.EncodeToString(pub)}}, Quorum: descriptor.Quorum{M: 1, N: 1}}
	g, err := descriptor.Genesis(tr, time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	fx, err := committer.GenesisEffects(g)
	if err != nil {
		t.Fatal(err)
	}
	return fx
}

// initEntry encodes the init entry of a fresh log with key k.
func initEntry(t testing.TB, k *tiles.LogKey) []byte {
	t.Helper()
	b, err := Encode(Entry{Init: &Init{Origin: k.Origin(), Key: k.SignerKey()}, Effects: genesisFx(t)})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func testKey(t testing.TB) *tiles.LogKey {
	t.Helper()
	k, err := tiles.NewLogKey("example.com/log")
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestCodecRoundTrip(t *testing.T) {
	k := testKey(t)
	b := initEntry(t, k)
	e, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if e.Init == nil || e.Init.Origin != k.Origin() || len(e.Effects.Records) != 1 {
		t.Fatalf("decoded %+v", e)
	}
	fx := committer.Effects{Token: "t-1", Deleted: []string{"p_" + strings.Repeat("a", 32)}}
	b, err = Encode(Entry{Effects: fx})
	if err != nil {
		t.Fatal(err)
	}
	if e, err = Decode(b); err != nil || e.Init != nil || e.Effects.Token != "t-1" {
		t.Fatalf("effects entry: %+v, %v", e, err)
	}
}

func TestDecodeMalformed(t *testing.T) {
	k := testKey(t)
	other := testKey(t)
	good := string(initEntry(t, k))
	cases := map[string]string{
		"empty":             ``,
		"not json":          `{`,
		"unknown op":        `{"op":"drop","effects":{}}`,
		"no effects":        `{"op":"effects"}`,
		"unknown member":    `{"op":"effects","effects":{},"x":1}`,
		"unknown effect":    `{"op":"effects","effects":{"y":1}}`,
		"trailing data":     `{"op":"effects","effects":{}} {}`,
		"spacing":           `{"op": "effects","effects":{}}`,
		"case":              `{"OP":"effects","effects":{}}`,
		"origin on effects": `{"op":"effects","origin":"a","effects":{}}`,
		"init without key":  `{"op":"init","origin":"example.com/log","effects":{}}`,
		"init key of another origin": strings.Replace(good, `"key":"`+k.SignerKey(), `"key":"`+
			strings.Replace(other.SignerKey(), "example.com/log", "example.com/other", 1), 1),
		"bad token":              `{"op":"effects","effects":{"token":"a\u0001"}}`,
		"retired no head":        `{"op":"effects","effects":{"retired":[]}}`,
		"head no retired":        `{"op":"effects","effects":{"head":{"version":0,"payload_b3":"b3:` + strings.Repeat("0", 64) + `","committed_at":""}}}`,
		"bad deleted id":         `{"op":"effects","effects":{"deleted":["x"]}}`,
		"repeated id":            `{"op":"effects","effects":{"deleted":["p_` + strings.Repeat("a", 32) + `","p_` + strings.Repeat("a", 32) + `"]}}`,
		"record not an artifact": `{"op":"effects","effects":{"records":[{"version":0,"artifact":"e30="}]}}`,
		"record gap":             strings.Replace(good, `"records":[`, `"records":[{"version":5,"artifact":"e30="},`, 1),
	}
	for name, in := range cases {
		t.Run(name, func(t *testing.T) {
			if _, err := Decode([]byte(in)); !errors.Is(err, errMalformed) {
				t.Fatalf("Decode(%q) = %v, want a malformed entry", in, err)
			}
		})
	}
}

func FuzzDecode(f *testing.F) {
	f.Add(initEntry(f, testKey(f)))
	f.Add([]byte(`{"op":"effects","effects":{"token":"x"}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		e, err := Decode(b)
		if err != nil {
			return
		}
		again, err := Encode(e)
		if err != nil || !bytes.Equal(again, b) {
			t.Fatalf("a decoded entry does not re-encode to its bytes: %v", err)
		}
	})
}

// member is one member's stores and FSM.
type member struct {
	log   *segment.Log
	db    kv.DB
	fsm   *FSM
	fatal []error
	notes []Notice
	key   string
}

func newMember(t *testing.T) *member {
	t.Helper()
	log, _, err := segment.Open("/reg/log", segment.Options{FS: segment.NewMemFS(), SegmentRecords: 256,
		Check: committer.CheckRecord, DurableHead: -1})
	if err != nil {
		t.Fatal(err)
	}
	m := &member{log: log, db: memkv.New()}
	t.Cleanup(func() { _ = log.Close(); _ = m.db.Close() })
	m.fsm = NewFSM(Options{Log: log, DB: m.db, Fatal: func(err error) { m.fatal = append(m.fatal, err) },
		InstallKey: func(s string) error {
			if m.key != "" && m.key != s {
				return errors.New("another key")
			}
			m.key = s
			return nil
		},
		Key: func() string { return m.key }, Applied: func(n Notice) { m.notes = append(m.notes, n) }})
	return m
}

func apply(m *member, index uint64, b []byte) Result {
	res, _ := m.fsm.Apply(&raft.Log{Index: index, Type: raft.LogCommand, Data: b}).(Result)
	return res
}

func TestFSMApplyAndReplay(t *testing.T) {
	m := newMember(t)
	b := initEntry(t, testKey(t))
	if res := apply(m, 3, b); res.Err != nil || res.Replayed {
		t.Fatalf("init: %+v", res)
	}
	if m.log.Next() != 1 || m.key == "" || len(m.notes) != 1 {
		t.Fatalf("after init: next %d key %q notes %v", m.log.Next(), m.key, m.notes)
	}
	before := dump(t, m.db)
	if res := apply(m, 3, b); !res.Replayed {
		t.Fatalf("replay: %+v", res)
	}
	if res := apply(m, 2, b); !res.Replayed {
		t.Fatalf("older entry: %+v", res)
	}
	if after := dump(t, m.db); after != before || m.log.Next() != 1 || len(m.notes) != 1 {
		t.Fatal("a replay changed the stores")
	}
	if applied, ok, _ := LogApplied(context.Background(), m.db); !ok || applied != 3 {
		t.Fatalf("log_applied %d %v", applied, ok)
	}
	if res := apply(m, 4, []byte(`{`)); !errors.Is(res.Err, errMalformed) || len(m.fatal) != 0 {
		t.Fatalf("malformed: %+v", res)
	}
}

func TestFSMFatalOnStoreFailure(t *testing.T) {
	m := newMember(t)
	// A HEAD record of version 1 with an empty log is a gap: fatal.
	fx := genesisFx(t)
	fx.Records[0].Version = 1
	// Re-encode the artifact is not needed: the entry fails CheckRecord, so
	// use a record-less HEAD beyond the log instead.
	fx = committer.Effects{Head: genesisFx(t).Head, Retired: []string{}}
	b, err := Encode(Entry{Effects: fx})
	if err != nil {
		t.Fatal(err)
	}
	if res := apply(m, 1, b); !errors.Is(res.Err, errStopped) || len(m.fatal) != 1 {
		t.Fatalf("HEAD beyond the log: %+v, fatal %v", res, m.fatal)
	}
	if res := apply(m, 2, initEntry(t, testKey(t))); !errors.Is(res.Err, errStopped) || m.log.Next() != 0 {
		t.Fatalf("after a failure: %+v", res)
	}
	if _, ok, _ := LogApplied(context.Background(), m.db); ok {
		t.Fatal("log_applied moved past the failed entry")
	}
}

func TestFSMOtherKeyIsFatal(t *testing.T) {
	m := newMember(t)
	m.key = testKey(t).SignerKey()
	if res := apply(m, 1, initEntry(t, testKey(t))); !errors.Is(res.Err, errStopped) || len(m.fatal) != 1 {
		t.Fatalf("another key: %+v", res)
	}
}

func TestSnapshotRoundTrip(t *testing.T) {
	a := newMember(t)
	if res := apply(a, 5, initEntry(t, testKey(t))); res.Err != nil {
		t.Fatal(res.Err)
	}
	snap, err := a.fsm.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	var sink memSink
	if err := snap.Persist(&sink); err != nil {
		t.Fatal(err)
	}
	b := newMember(t)
	if err := b.fsm.Restore(io.NopCloser(bytes.NewReader(sink.Bytes()))); err != nil {
		t.Fatal(err)
	}
	if dump(t, a.db) != dump(t, b.db) || b.log.Next() != 1 || b.key != a.key {
		t.Fatalf("restored member differs:\n%s\n%s", dump(t, a.db), dump(t, b.db))
	}
	ra, _ := a.log.Read(0)
	rb, _ := b.log.Read(0)
	if !bytes.Equal(ra.Artifact, rb.Artifact) {
		t.Fatal("restored record differs")
	}
	if n := b.notes; len(n) != 1 || !n[0].Restored || n[0].Index != 5 {
		t.Fatalf("notices %v", n)
	}
	// A member at or past the snapshot keeps its stores.
	if err := b.fsm.Restore(io.NopCloser(bytes.NewReader(sink.Bytes()))); err != nil || len(b.notes) != 1 {
		t.Fatalf("second restore: %v, notices %v", err, b.notes)
	}
	// Broken snapshots change nothing.
	for _, bad := range []string{"{}\n", "x\n", strings.Replace(sink.String(), `"records":1`, `"records":2`, 1)} {
		c := newMember(t)
		if err := c.fsm.Restore(io.NopCloser(strings.NewReader(bad))); err == nil || c.log.Next() != 0 {
			t.Fatalf("restore of %.40q: %v", bad, err)
		}
	}
	// An empty section on a member holding a registry is refused.
	if err := b.fsm.Restore(io.NopCloser(strings.NewReader(""))); err == nil {
		t.Fatal("empty snapshot over a registry accepted")
	}
}

// dump renders registry.db's buckets for comparison.
func dump(t *testing.T, db kv.DB) string {
	t.Helper()
	var sb strings.Builder
	err := db.View(context.Background(), func(tx kv.Tx) error {
		for _, name := range []string{committer.BucketMeta, committer.BucketProposals} {
			b := tx.Bucket(name)
			if b == nil {
				continue
			}
			cur := b.Cursor()
			for k, v := cur.First(); k != nil; k, v = cur.Next() {
				sb.WriteString(name + "/" + string(k) + "=" + string(v) + "\n")
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return sb.String()
}

// memSink is a raft.SnapshotSink in memory.
type memSink struct{ bytes.Buffer }

func (*memSink) ID() string    { return "" }
func (*memSink) Cancel() error { return nil }
func (*memSink) Close() error  { return nil }
