package tiles

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"testing"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/ronhq/ron/store/kv"
)

func TestEmptyTree(t *testing.T) {
	tr, _ := newMemTree(t)
	cp := tr.Checkpoint()
	if cp.Size != 0 || cp.Root != EmptyRoot || tr.Size() != 0 {
		t.Fatalf("empty checkpoint %+v", cp)
	}
	v, err := note.NewVerifier(tr.Key().VerifierKey())
	if err != nil {
		t.Fatal(err)
	}
	n, err := note.Open(cp.Note, note.VerifierList(v))
	if err != nil || n.Text != tr.Key().Origin()+"\n0\n47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=\n" {
		t.Fatalf("empty note %q, %v", cp.Note, err)
	}
	if root, err := tr.RootAt(0); err != nil || root != EmptyRoot {
		t.Fatalf("RootAt(0) = %x, %v", root, err)
	}
	for _, err := range []error{
		second(tr.Tile(0, 0, 1)), second(tr.RootAt(1)), second(tr.LeafHash(0)), second(tr.InclusionProof(0, 1)),
	} {
		if !errors.Is(err, ErrNotFound) {
			t.Errorf("empty tree read: %v, want ErrNotFound", err)
		}
	}
	same, err := tr.Append(t.Context(), nil)
	if err != nil || !bytes.Equal(same.Note, cp.Note) {
		t.Fatalf("empty Append = %+v, %v", same, err)
	}
}

func second[T any](_ T, err error) error { return err }

// TestTileCoverage walks the coverage boundaries: a tile is 404 until the
// published checkpoint covers it, and its content never changes afterwards.
func TestTileCoverage(t *testing.T) {
	type want struct {
		level uint8
		n     uint64
		width int
		ok    bool
	}
	steps := []struct {
		size  uint64
		tiles []want
	}{
		{1, []want{{0, 0, 1, true}, {0, 0, 2, false}, {0, 0, 0, false}}},
		{255, []want{{0, 0, 255, true}, {0, 0, 0, false}, {1, 0, 1, false}}},
		{256, []want{{0, 0, 0, true}, {0, 0, 255, true}, {0, 1, 1, false}, {1, 0, 1, true}, {1, 0, 0, false}, {1, 0, 2, false}}},
		{257, []want{{0, 1, 1, true}, {0, 1, 2, false}, {1, 0, 1, true}}},
		{65535, []want{{1, 0, 255, true}, {1, 0, 0, false}, {0, 255, 255, true}, {0, 255, 0, false}, {0, 254, 0, true}, {2, 0, 1, false}}},
		{65536, []want{{1, 0, 0, true}, {0, 255, 0, true}, {2, 0, 1, true}, {2, 0, 0, false}, {0, 256, 1, false}}},
	}
	tr, _ := newMemTree(t)
	seen := map[TilePath][]byte{}
	for _, step := range steps {
		growTo(t, tr, step.size)
		for _, w := range step.tiles {
			got, err := tr.Tile(w.level, w.n, w.width)
			p := TilePath{Level: w.level, Index: w.n, Width: w.width}
			if !w.ok {
				if !errors.Is(err, ErrNotFound) {
					t.Errorf("size %d: tile %s = %d bytes, %v; want ErrNotFound", step.size, p, len(got), err)
				}
				continue
			}
			wantLen := int(p.width()) * HashSize
			if err != nil || len(got) != wantLen {
				t.Errorf("size %d: tile %s = %d bytes, %v; want %d", step.size, p, len(got), err, wantLen)
			}
			seen[p] = got
		}
		// Content never changes: every tile served before is a prefix of the
		// current full or rightmost tile.
		for p, old := range seen {
			cur, err := tr.Tile(p.Level, p.Index, p.Width)
			if err != nil || !bytes.Equal(cur, old) {
				t.Errorf("size %d: tile %s changed (%v)", step.size, p, err)
			}
		}
		if level1, err := tr.Tile(1, 0, 1); err == nil && [32]byte(level1[:32]) != mustRoot(t, tr, 256) {
			t.Error("level-1 hash 0 is not the root of the first 256 leaves")
		}
	}
	// Level-0 hashes are leaf hashes.
	full, err := tr.Tile(0, 3, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i := range uint64(TileWidth) {
		if h := tlog.RecordHash(testLeaf(3*TileWidth + i)); !bytes.Equal(full[i*HashSize:(i+1)*HashSize], h[:]) {
			t.Fatalf("leaf %d hash differs", 3*TileWidth+i)
		}
	}
	if h, err := tr.LeafHash(3*TileWidth + 7); err != nil || h != tlog.RecordHash(testLeaf(3*TileWidth+7)) {
		t.Fatalf("LeafHash = %x, %v", h, err)
	}
}

func mustRoot(t *testing.T, tr *Tree, size uint64) [32]byte {
	t.Helper()
	r, err := tr.RootAt(size)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestTileBadArgs(t *testing.T) {
	tr, _ := newMemTree(t)
	growTo(t, tr, 300)
	for _, tc := range []struct {
		level uint8
		n     uint64
		width int
	}{{64, 0, 0}, {255, 0, 1}, {0, 0, 256}, {0, 0, -1}, {0, 1, 1000}} {
		if _, err := tr.Tile(tc.level, tc.n, tc.width); !errors.Is(err, ErrBadPath) {
			t.Errorf("Tile(%d, %d, %d) = %v, want ErrBadPath", tc.level, tc.n, tc.width, err)
		}
	}
	for _, tc := range []struct {
		name string
		err  error
		want error
	}{
		{"index = size", second(tr.InclusionProof(300, 300)), ErrBadRange},
		{"index > size", second(tr.InclusionProof(301, 300)), ErrBadRange},
		{"size > published", second(tr.InclusionProof(0, 301)), ErrNotFound},
		{"size1 = 0", second(tr.ConsistencyProof(0, 10)), ErrBadRange},
		{"size1 > size2", second(tr.ConsistencyProof(11, 10)), ErrBadRange},
		{"size2 > published", second(tr.ConsistencyProof(1, 301)), ErrNotFound},
		{"root beyond", second(tr.RootAt(301)), ErrNotFound},
		{"leaf beyond", second(tr.LeafHash(300)), ErrNotFound},
	} {
		if !errors.Is(tc.err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, tc.err, tc.want)
		}
	}
	if p, err := tr.ConsistencyProof(300, 300); err != nil || len(p) != 0 {
		t.Errorf("equal sizes: %d hashes, %v", len(p), err)
	}
}

func TestAppendLeafLimits(t *testing.T) {
	tr, _ := newMemTree(t)
	if _, err := tr.Append(t.Context(), [][]byte{[]byte("a"), make([]byte, MaxLeafSize+1)}); !errors.Is(err, ErrLeafTooLarge) {
		t.Fatalf("oversized leaf: %v", err)
	}
	if tr.Size() != 0 {
		t.Fatal("oversized batch appended something")
	}
	if cp, err := tr.Append(t.Context(), [][]byte{{}, make([]byte, MaxLeafSize)}); err != nil || cp.Size != 2 {
		t.Fatalf("empty and maximal leaves: %+v, %v", cp, err)
	}
	if h, err := tr.LeafHash(0); err != nil || h != tlog.RecordHash(nil) {
		t.Fatalf("empty leaf hash %x, %v", h, err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := tr.Append(ctx, [][]byte{[]byte("late")}); !errors.Is(err, context.Canceled) || tr.Size() != 2 {
		t.Fatalf("canceled Append: %v, size %d", err, tr.Size())
	}
}

// TestSplitViewRefused: a stored tile that no longer matches the previous
// checkpoint makes Append refuse to sign, and nothing changes.
func TestSplitViewRefused(t *testing.T) {
	for _, tc := range []struct {
		name  string
		level uint8
		index uint64
		at    int
	}{
		{"rightmost level-0 tile", 0, 1, 0},
		{"last hash of rightmost tile", 0, 1, 44*HashSize - 1},
		{"level-1 tile", 1, 0, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr, db := newMemTree(t)
			before := growTo(t, tr, 300)
			if err := tr.VerifyCheckpoint(); err != nil {
				t.Fatalf("VerifyCheckpoint before tamper: %v", err)
			}
			tamperTile(t, db, tc.level, tc.index, tc.at)
			_, err := tr.Append(t.Context(), [][]byte{[]byte("next")})
			if !errors.Is(err, ErrSplitView) {
				t.Fatalf("Append after tamper: %v, want ErrSplitView", err)
			}
			if cp := tr.Checkpoint(); !bytes.Equal(cp.Note, before.Note) || tr.Size() != 300 {
				t.Fatalf("checkpoint moved to %d", cp.Size)
			}
			if root := mustRoot(t, tr, 300); root == before.Root {
				t.Fatal("tampered tiles still give the checkpoint root")
			}
			if err := tr.VerifyCheckpoint(); !errors.Is(err, ErrSplitView) {
				t.Fatalf("VerifyCheckpoint after tamper: %v, want ErrSplitView", err)
			}
			err = db.View(t.Context(), func(tx kv.Tx) error {
				cp, _, err := storedCheckpoint(tx.Bucket(bucketCheckpoint), tr.Key())
				if err == nil && cp.Size != 300 {
					t.Errorf("stored checkpoint size %d", cp.Size)
				}
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestAppendCorruptStore(t *testing.T) {
	t.Run("truncated tile", func(t *testing.T) {
		tr, db := newMemTree(t)
		growTo(t, tr, 300)
		putRaw(t, db, bucketTiles, tileKey(0, 1), make([]byte, 10))
		if _, err := tr.Append(t.Context(), [][]byte{[]byte("x")}); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("got %v, want ErrCorrupt", err)
		}
		if _, err := tr.Tile(0, 1, 44); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("Tile: %v, want ErrCorrupt", err)
		}
		if err := tr.VerifyCheckpoint(); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("VerifyCheckpoint: %v, want ErrCorrupt", err)
		}
	})
	t.Run("foreign checkpoint", func(t *testing.T) {
		tr, db := newMemTree(t)
		growTo(t, tr, 3)
		other, err := NewLogKey(tr.Key().Origin())
		if err != nil {
			t.Fatal(err)
		}
		cp, err := signCheckpoint(other, 3, tr.Checkpoint().Root)
		if err != nil {
			t.Fatal(err)
		}
		putRaw(t, db, bucketCheckpoint, checkpointKey, cp.Note)
		if _, err := tr.Append(t.Context(), [][]byte{[]byte("x")}); !errors.Is(err, ErrBadCheckpoint) {
			t.Fatalf("got %v, want ErrBadCheckpoint", err)
		}
		if _, err := OpenTree(t.Context(), db, tr.Key()); !errors.Is(err, ErrBadCheckpoint) {
			t.Fatalf("OpenTree: %v, want ErrBadCheckpoint", err)
		}
	})
}

func putRaw(t *testing.T, db kv.DB, bucket string, key, val []byte) {
	t.Helper()
	if err := db.Update(t.Context(), func(tx kv.Tx) error { return tx.Bucket(bucket).Put(key, val) }); err != nil {
		t.Fatal(err)
	}
}

func TestOpenTreeArgs(t *testing.T) {
	key, err := NewLogKey("")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := OpenTree(t.Context(), nil, key); err == nil {
		t.Fatal("nil db accepted")
	}
	tr, db := newMemTree(t)
	if _, err := OpenTree(t.Context(), db, nil); err == nil {
		t.Fatal("nil key accepted")
	}
	db.Close()
	if _, err := tr.Tile(0, 0, 1); err == nil {
		t.Fatal("read after close succeeded")
	}
}

// TestPersistenceBolt: a bolt-backed tree reopens with the same checkpoint
// and tiles and keeps growing consistently; another key cannot open it.
func TestPersistenceBolt(t *testing.T) {
	dir := t.TempDir()
	key, err := LoadOrCreateLogKey(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	db := openBolt(t, dir)
	tr, err := OpenTree(t.Context(), db, key)
	if err != nil {
		t.Fatal(err)
	}
	cp1 := growTo(t, tr, 1000)
	tile1, err := tr.Tile(0, 3, 232)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	key2, err := LoadOrCreateLogKey(dir, key.Origin())
	if err != nil {
		t.Fatal(err)
	}
	db2 := openBolt(t, dir)
	defer db2.Close()
	tr2, err := OpenTree(t.Context(), db2, key2)
	if err != nil {
		t.Fatal(err)
	}
	if got := tr2.Checkpoint(); !bytes.Equal(got.Note, cp1.Note) || got.Size != 1000 || got.Root != cp1.Root {
		t.Fatalf("reopened checkpoint %+v", got)
	}
	if tile2, err := tr2.Tile(0, 3, 232); err != nil || !bytes.Equal(tile2, tile1) {
		t.Fatalf("reopened tile differs: %v", err)
	}
	if root := mustRoot(t, tr2, 1000); root != cp1.Root {
		t.Fatal("reopened root differs")
	}
	if err := tr2.VerifyCheckpoint(); err != nil {
		t.Fatalf("VerifyCheckpoint after reopen: %v", err)
	}
	cp2 := growTo(t, tr2, 1300)
	checkAgainstTlog(t, tr2, cp1, cp2, 4)

	stranger, err := NewLogKey(key.Origin())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := OpenTree(t.Context(), db2, stranger); !errors.Is(err, ErrBadCheckpoint) {
		t.Fatalf("other key: %v, want ErrBadCheckpoint", err)
	}
}

// TestConcurrentAppends: concurrent writers never lose leaves and the
// published checkpoint only grows.
func TestConcurrentAppends(t *testing.T) {
	tr, _ := newMemTree(t)
	const writers, rounds = 4, 25
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for r := range rounds {
				if _, err := tr.Append(context.Background(), [][]byte{{byte(w), byte(r)}, {byte(w)}}); err != nil {
					t.Errorf("writer %d: %v", w, err)
					return
				}
			}
		})
	}
	var last uint64
	for range 100 {
		if s := tr.Size(); s < last {
			t.Fatalf("published size went back from %d to %d", last, s)
		} else {
			last = s
		}
		_, _ = tr.Tile(0, 0, 1)
	}
	wg.Wait()
	if tr.Size() != writers*rounds*2 {
		t.Fatalf("size %d, want %d", tr.Size(), writers*rounds*2)
	}
	if root := mustRoot(t, tr, tr.Size()); root != tr.Checkpoint().Root {
		t.Fatal("final root differs from checkpoint")
	}
}
