package indexdb

import (
	"encoding/binary"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/ronhq/ron/internal/testclock"
	"github.com/ronhq/ron/roles/index/indexapi"
	"github.com/ronhq/ron/store"
	"github.com/ronhq/ron/store/kv"
)

func ann(obj, node string, ttl time.Duration) indexapi.Announcement {
	return indexapi.Announcement{ID: id(obj), Node: node, Addr: "http://" + node + ".local:7070", TTL: ttl}
}

func mustAnnounce(t *testing.T, db *DB, recs ...indexapi.Announcement) AnnounceResult {
	t.Helper()
	res, err := db.Announce(ctx, recs)
	if err != nil {
		t.Fatalf("Announce: %v", err)
	}
	return res
}

func nodes(ps []Provider) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.Node
	}
	return out
}

// countBucket returns the number of keys in a bucket.
func countBucket(t *testing.T, db *DB, bucket string) int {
	t.Helper()
	n := 0
	err := db.kv.View(ctx, func(tx kv.Tx) error {
		c := tx.Bucket(bucket).Cursor()
		for k, _ := c.First(); k != nil; k, _ = c.Next() {
			n++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestAnnounceAndOrder(t *testing.T) {
	forEach(t, func(t *testing.T, db *DB, c *testclock.Clock) {
		mustAnnounce(t, db, ann("o", "b", time.Minute), ann("o", "a", time.Minute))
		c.Advance(time.Second)
		eu := ann("o", "c", time.Minute)
		eu.Region, eu.Type = "eu", "text/plain"
		res := mustAnnounce(t, db, eu, ann("o", "d", time.Minute), ann("other", "a", time.Minute))
		if res != (AnnounceResult{Accepted: 3}) {
			t.Fatalf("result %+v", res)
		}
		ps, err := db.Providers(ctx, id("o"), "eu", 0)
		if err != nil || fmt.Sprint(nodes(ps)) != "[c d a b]" {
			t.Fatalf("order %v, %v", nodes(ps), err)
		}
		if ps[0].Type != "text/plain" || ps[0].Addr != "http://c.local:7070" || ps[0].ID != id("o") {
			t.Fatalf("record %+v", ps[0])
		}
		if !ps[0].LastSeen.Equal(c.Now()) || !ps[0].Expires.Equal(c.Now().Add(time.Minute)) {
			t.Fatalf("times %+v", ps[0])
		}
		if ps, _ := db.Providers(ctx, id("o"), "", 2); fmt.Sprint(nodes(ps)) != "[c d]" {
			t.Fatalf("limit/no region %v", nodes(ps))
		}
		if ps, err := db.Providers(ctx, id("none"), "", 0); err != nil || len(ps) != 0 {
			t.Fatalf("none: %v %v", ps, err)
		}
	})
}

func TestRefreshReplacesExpiry(t *testing.T) {
	forEach(t, func(t *testing.T, db *DB, c *testclock.Clock) {
		mustAnnounce(t, db, ann("o", "a", time.Minute))
		c.Advance(30 * time.Second)
		r := ann("o", "a", time.Hour)
		r.Addr, r.Region = "https://new.example/base", "us"
		mustAnnounce(t, db, r)
		if n := countBucket(t, db, bucketExpiry); n != 1 {
			t.Fatalf("expiry keys %d, want 1", n)
		}
		c.Advance(time.Minute) // past the first TTL
		if n, _ := db.Prune(ctx, 0); n != 0 {
			t.Fatalf("pruned %d refreshed records", n)
		}
		ps, _ := db.Providers(ctx, id("o"), "", 0)
		if len(ps) != 1 || ps[0].Addr != r.Addr || ps[0].Region != "us" {
			t.Fatalf("after refresh %+v", ps)
		}
	})
}

func TestTTLExpiryAndWithdraw(t *testing.T) {
	forEach(t, func(t *testing.T, db *DB, c *testclock.Clock) {
		mustAnnounce(t, db, ann("o", "short", 10*time.Second), ann("o", "long", time.Hour))
		c.Advance(10 * time.Second) // expires == now counts as expired
		if ps, _ := db.Providers(ctx, id("o"), "", 0); fmt.Sprint(nodes(ps)) != "[long]" {
			t.Fatalf("expired not filtered: %v", nodes(ps))
		}
		res := mustAnnounce(t, db, ann("o", "long", 0), ann("o", "ghost", 0))
		if res != (AnnounceResult{Withdrawn: 2}) {
			t.Fatalf("withdraw result %+v", res)
		}
		if ps, _ := db.Providers(ctx, id("o"), "", 0); len(ps) != 0 {
			t.Fatalf("after withdraw %v", nodes(ps))
		}
		if np, ne := countBucket(t, db, bucketProviders), countBucket(t, db, bucketExpiry); np != 1 || ne != 1 {
			t.Fatalf("providers %d expiry %d, want the expired one left for the janitor", np, ne)
		}
	})
}

func TestBatchAtomicity(t *testing.T) {
	forEach(t, func(t *testing.T, db *DB, c *testclock.Clock) {
		good := ann("o", "a", time.Minute)
		bad := ann("o", "b c", time.Minute)
		_, err := db.Announce(ctx, []indexapi.Announcement{good, good, bad})
		var ie *indexapi.InvalidError
		if !errors.As(err, &ie) || ie.Index != 2 || ie.Field != "node" || !errors.Is(err, indexapi.ErrInvalid) {
			t.Fatalf("err %v", err)
		}
		if ps, _ := db.Providers(ctx, id("o"), "", 0); len(ps) != 0 {
			t.Fatalf("partial batch applied: %v", nodes(ps))
		}
		batch := make([]indexapi.Announcement, MaxBatch)
		for i := range batch {
			batch[i] = ann(fmt.Sprint("obj", i), "n", time.Minute)
		}
		if res := mustAnnounce(t, db, batch...); res.Accepted != MaxBatch {
			t.Fatalf("full batch %+v", res)
		}
		if n := countBucket(t, db, bucketExpiry); n != MaxBatch {
			t.Fatalf("expiry %d", n)
		}
		if _, err := db.Announce(ctx, append(batch, good)); !errors.As(err, &ie) || ie.Index != -1 {
			t.Fatalf("oversize batch: %v", err)
		}
		if _, err := db.Announce(ctx, nil); !errors.Is(err, indexapi.ErrInvalid) {
			t.Fatalf("empty batch: %v", err)
		}
	})
}

func TestAnnounceValidation(t *testing.T) {
	forEach(t, func(t *testing.T, db *DB, c *testclock.Clock) {
		for field, mod := range map[string]func(*indexapi.Announcement){
			"node":   func(a *indexapi.Announcement) { a.Node = "" },
			"addr":   func(a *indexapi.Announcement) { a.Addr = "ftp://h/" },
			"ttl_s":  func(a *indexapi.Announcement) { a.TTL = DefaultMaxTTL + time.Second },
			"region": func(a *indexapi.Announcement) { a.Region = "eu west" },
			"type":   func(a *indexapi.Announcement) { a.Type = "text/\x01" },
		} {
			a := ann("o", "a", time.Minute)
			mod(&a)
			var ie *indexapi.InvalidError
			if _, err := db.Announce(ctx, []indexapi.Announcement{a}); !errors.As(err, &ie) || ie.Field != field || ie.Index != 0 {
				t.Errorf("%s: %v", field, err)
			}
		}
		neg := ann("o", "a", -time.Second)
		if _, err := db.Announce(ctx, []indexapi.Announcement{neg}); !errors.Is(err, indexapi.ErrInvalid) {
			t.Errorf("negative ttl: %v", err)
		}
	})
}

func TestCheckAddr(t *testing.T) {
	for _, ok := range []string{"http://h", "https://h.example:8443/base", "http://[::1]:80/"} {
		if msg := checkAddr(ok); msg != "" {
			t.Errorf("checkAddr(%q) = %s", ok, msg)
		}
	}
	for _, bad := range []string{"", "ftp://h/", "http://u:p@h/", "http://h/?q", "http://h/#f", "http://h/?",
		"/rel", "http:opaque", "http://", "http://:80/", "h:80", "http://h/" + string(make([]byte, 250))} {
		if msg := checkAddr(bad); msg == "" {
			t.Errorf("checkAddr(%q) accepted", bad)
		}
	}
}

func TestPerObjectCap(t *testing.T) {
	forEach(t, func(t *testing.T, db *DB, c *testclock.Clock) {
		batch := make([]indexapi.Announcement, MaxProvidersPerObject)
		for i := range batch { // node i expires after 100+i seconds
			batch[i] = ann("o", fmt.Sprintf("n%02d", i), time.Duration(100+i)*time.Second)
		}
		mustAnnounce(t, db, batch...)
		mustAnnounce(t, db, ann("o", "n05", time.Hour)) // refresh: no eviction
		if ps, _ := db.Providers(ctx, id("o"), "", 0); len(ps) != MaxProvidersPerObject {
			t.Fatalf("refresh evicted: %d", len(ps))
		}
		mustAnnounce(t, db, ann("o", "new", time.Hour), ann("other", "x", time.Second))
		ps, _ := db.Providers(ctx, id("o"), "", 0)
		if len(ps) != MaxProvidersPerObject {
			t.Fatalf("cap: %d", len(ps))
		}
		have := map[string]bool{}
		for _, p := range ps {
			have[p.Node] = true
		}
		if have["n00"] || !have["new"] || !have["n01"] || !have["n05"] {
			t.Fatalf("wrong eviction: n00=%v new=%v", have["n00"], have["new"])
		}
		if n := countBucket(t, db, bucketExpiry); n != MaxProvidersPerObject+1 {
			t.Fatalf("expiry keys %d", n)
		}
	})
}

func TestPrune(t *testing.T) {
	forEach(t, func(t *testing.T, db *DB, c *testclock.Clock) {
		var batch []indexapi.Announcement
		for i := range 10 { // expiries 1..10 s
			batch = append(batch, ann(fmt.Sprint("o", i%3), fmt.Sprint("n", i), time.Duration(i+1)*time.Second))
		}
		mustAnnounce(t, db, batch...)
		c.Advance(7 * time.Second) // 7 expired (1..7 s), 3 live
		var got []int
		for {
			n, err := db.Prune(ctx, 3)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, n)
			if n < 3 {
				break
			}
		}
		if fmt.Sprint(got) != "[3 3 1]" {
			t.Fatalf("prune steps %v", got)
		}
		if np, ne := countBucket(t, db, bucketProviders), countBucket(t, db, bucketExpiry); np != 3 || ne != 3 {
			t.Fatalf("left providers %d expiry %d", np, ne)
		}
		// The survivors are exactly the three latest expiries, in order.
		var left []int64
		_ = db.kv.View(ctx, func(tx kv.Tx) error {
			cur := tx.Bucket(bucketExpiry).Cursor()
			for k, _ := cur.First(); k != nil; k, _ = cur.Next() {
				left = append(left, int64(binary.BigEndian.Uint64(k))-c.Now().Add(-7*time.Second).UnixMilli())
			}
			return nil
		})
		if fmt.Sprint(left) != "[8000 9000 10000]" {
			t.Fatalf("left %v", left)
		}
		if n, _ := db.Prune(ctx, 0); n != 0 {
			t.Fatalf("nothing expired but pruned %d", n)
		}
	})
}

func TestPruneOrphanAndMalformedKeys(t *testing.T) {
	forEach(t, func(t *testing.T, db *DB, c *testclock.Clock) {
		mustAnnounce(t, db, ann("o", "a", time.Hour))
		pk := providerKey(id("o"), "a")
		err := db.kv.Update(ctx, func(tx kv.Tx) error {
			b := tx.Bucket(bucketExpiry)
			if err := b.Put(expiryKey(1, pk), []byte{}); err != nil { // stale key
				return err
			}
			return b.Put([]byte{0}, []byte{})
		})
		if err != nil {
			t.Fatal(err)
		}
		if n, err := db.Prune(ctx, 0); n != 2 || err != nil {
			t.Fatalf("prune %d %v", n, err)
		}
		if ps, _ := db.Providers(ctx, id("o"), "", 0); len(ps) != 1 {
			t.Fatal("stale expiry key removed a live record")
		}
	})
}

func TestProviderKeyLayout(t *testing.T) {
	var x store.ID
	x[0], x[31] = 1, 2
	k := expiryKey(0x0102, providerKey(x, "node"))
	if len(k) != 8+32+4 || k[6] != 1 || k[7] != 2 || k[8] != 1 || k[39] != 2 || string(k[40:]) != "node" {
		t.Fatalf("layout % x", k)
	}
	if x[0] != 1 || len(providerKey(x, "")) != 32 {
		t.Fatal("providerKey aliased its input")
	}
}
