package fs

import (
	"bytes"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/ronhq/ron/store"
	"github.com/ronhq/ron/store/storetest"
)

// writeV1 replaces id's sidecar with the v1 one a ron before the outboard
// wrote.
func writeV1(t *testing.T, s *Store, data []byte, ct string, created time.Time) store.ID {
	t.Helper()
	sc := storetest.SidecarV1(data, ct, created)
	if err := os.WriteFile(s.metaPath(sc.Digest), store.EncodeSidecar(sc), fileMode); err != nil {
		t.Fatal(err)
	}
	s.cache.purge()
	return sc.Digest
}

// TestUpgradeV1 stores objects, turns their sidecars into v1 and upgrades
// them: before, they read through their chunk digests; after, the sidecar
// on disk is v2 with the same content type and creation time, and the
// outboard is the object's.
func TestUpgradeV1(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir, Options{})
	created := time.UnixMilli(1_600_000_000_000)
	var ids []store.ID
	for _, n := range []int{0, 1, 65536, 3*65536 + 9} {
		data := storetest.Pattern(n)
		put(t, s, data, "text/x")
		ids = append(ids, writeV1(t, s, data, "text/x", created))
	}
	for i, n := range []int{0, 1, 65536, 3*65536 + 9} {
		data, id := storetest.Pattern(n), ids[i]
		o, err := s.Open(bg, id)
		if err != nil || o.Outboard() != nil {
			t.Fatalf("%d bytes: v1 object opened with an outboard (%v)", n, err)
		}
		o.Close()
		if got, err := storetest.ReadAll(t, s, id); err != nil || !bytes.Equal(got, data) {
			t.Fatalf("%d bytes: v1 read: %v", n, err)
		}
		if up, err := s.Upgrade(bg, id); !up || err != nil {
			t.Fatalf("%d bytes: Upgrade = %v, %v", n, up, err)
		}
		b, _ := os.ReadFile(s.metaPath(id))
		sc, err := store.DecodeSidecar(b, id)
		if err != nil || sc.Version != store.SidecarV2 || sc.ContentType != "text/x" || !sc.Created.Equal(created) ||
			!bytes.Equal(sc.Outboard, storetest.ExpectedOutboard(data)) {
			t.Fatalf("%d bytes: sidecar on disk after the upgrade: %+v, %v", n, sc, err)
		}
		if o, err = s.Open(bg, id); err != nil || !bytes.Equal(o.Outboard(), sc.Outboard) {
			t.Fatalf("%d bytes: open after the upgrade: %v", n, err)
		}
		o.Close()
		if up, err := s.Upgrade(bg, id); up || err != nil {
			t.Fatalf("%d bytes: second Upgrade = %v, %v", n, up, err)
		}
	}
	if _, err := s.Upgrade(bg, store.Sum([]byte("absent"))); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Upgrade of an absent object = %v", err)
	}
	assertTmpEmpty(t, s)
}

// TestUpgradeQuarantinesBadData: a v1 object whose data no longer hashes
// to its id is quarantined by the upgrade, not given an outboard.
func TestUpgradeQuarantinesBadData(t *testing.T) {
	s := open(t, t.TempDir(), Options{})
	data := storetest.Pattern(2*65536 + 1)
	put(t, s, data, "")
	id := writeV1(t, s, data, "", time.Now())
	flip(t, s, id, 70000)
	var ce *store.CorruptError
	if up, err := s.Upgrade(bg, id); up || !errors.As(err, &ce) || ce.Chunk != -1 {
		t.Fatalf("Upgrade of corrupt data = %v, %v", up, err)
	}
	if _, err := s.Open(bg, id); !errors.Is(err, store.ErrQuarantined) {
		t.Fatalf("Open after = %v, want ErrQuarantined", err)
	}
}

// TestUpgradeRebuildsInvalidSidecar: an unreadable sidecar is rebuilt as
// v2 by Upgrade (its content type is lost, as with a read's rebuild).
func TestUpgradeRebuildsInvalidSidecar(t *testing.T) {
	s := open(t, t.TempDir(), Options{})
	data := storetest.Pattern(100)
	info := put(t, s, data, "a/b")
	if err := os.WriteFile(s.metaPath(info.ID), []byte("RONS garbage"), fileMode); err != nil {
		t.Fatal(err)
	}
	s.cache.purge()
	if up, err := s.Upgrade(bg, info.ID); !up || err != nil {
		t.Fatalf("Upgrade = %v, %v", up, err)
	}
	if st, err := s.Stat(bg, info.ID); err != nil || st.Size != 100 {
		t.Fatalf("Stat = %+v, %v", st, err)
	}
}

// TestCacheKeepsUpgradedSidecar: a v1 sidecar loaded by a read that raced
// an upgrade does not replace the cached v2 one.
func TestCacheKeepsUpgradedSidecar(t *testing.T) {
	c := newSidecarCache(1 << 20)
	data := storetest.Pattern(70000)
	v1 := storetest.SidecarV1(data, "", time.Now())
	v2 := v1.Upgraded(storetest.ExpectedOutboard(data))
	c.add(&v2)
	c.add(&v1)
	if got, ok := c.get(v1.Digest); !ok || got.Version != store.SidecarV2 {
		t.Fatalf("cached %+v, want the v2 sidecar", got)
	}
	c.remove(v1.Digest)
	c.add(&v1)
	c.add(&v2)
	if got, _ := c.get(v1.Digest); got.Version != store.SidecarV2 {
		t.Fatalf("cached v%d after the upgrade, want v2", got.Version)
	}
}

// TestUpgradeDropsStaleV1Entry: when another upgrade renamed the v2
// sidecar over the v1 file after a read cached the v1 one, Upgrade (which
// finds v2 on disk) drops the stale entry, so the next Open has the
// outboard.
func TestUpgradeDropsStaleV1Entry(t *testing.T) {
	s := open(t, t.TempDir(), Options{})
	data := storetest.Pattern(70000)
	put(t, s, data, "")
	id := store.Sum(data)
	v1 := storetest.SidecarV1(data, "", time.Now())
	s.cache.purge()
	s.cache.add(&v1) // what a read that raced the rename left behind
	if up, err := s.Upgrade(bg, id); up || err != nil {
		t.Fatalf("Upgrade of an object already v2 on disk = %v, %v", up, err)
	}
	o, err := s.Open(bg, id)
	if err != nil || o.Outboard() == nil {
		t.Fatalf("Open after Upgrade: outboard %v (%v)", o != nil && o.Outboard() != nil, err)
	}
	o.Close()
}
