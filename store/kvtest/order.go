package kvtest

import (
	"bytes"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/ronhq/ron/store/kv"
)

// putKeys writes keys (value = key) into bucket bkt in one Update.
func putKeys(t *testing.T, db kv.DB, keys [][]byte) {
	t.Helper()
	update(t, db, func(tx kv.Tx) error {
		b, err := tx.CreateBucket(bkt)
		if err != nil {
			return err
		}
		for _, k := range keys {
			if err := b.Put(k, k); err != nil {
				return err
			}
		}
		return nil
	})
}

// checkOrder asserts that bucket bkt holds exactly want (sorted, distinct),
// walking forward and backward.
func checkOrder(t *testing.T, db kv.DB, want [][]byte) {
	t.Helper()
	view(t, db, func(tx kv.Tx) error {
		c := tx.Bucket(bkt).Cursor()
		i := 0
		for k, v := c.First(); k != nil; k, v = c.Next() {
			if i >= len(want) || !bytes.Equal(k, want[i]) || !bytes.Equal(v, want[i]) {
				t.Fatalf("forward key %d = %x, want %x", i, k, want[min(i, len(want)-1)])
			}
			i++
		}
		for k, _ := c.Last(); k != nil; k, _ = c.Prev() {
			i--
			if i < 0 || !bytes.Equal(k, want[i]) {
				t.Fatalf("backward key %d = %x", i, k)
			}
		}
		if i != 0 {
			t.Fatalf("walks saw a different number of keys (%d left)", i)
		}
		return nil
	})
}

func testBinaryKeys(t *testing.T, db kv.DB) {
	keys := [][]byte{
		{0x00}, {0x00, 0x00}, {0x00, 0x01}, {0x01}, {0x7f}, {0x80},
		{0xfe, 0xff}, {0xff}, {0xff, 0x00}, {0xff, 0xff}, {0xff, 0xff, 0xff},
	}
	shuffled := slices.Clone(keys)
	rand.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	putKeys(t, db, shuffled)
	checkOrder(t, db, keys)
	view(t, db, func(tx kv.Tx) error {
		c := tx.Bucket(bkt).Cursor()
		if k, _ := c.Seek([]byte{0xff, 0xff, 0xff, 0x00}); k != nil {
			t.Errorf("Seek past the 0xff keys = %x", k)
		}
		if k, _ := c.Seek([]byte{0x00, 0x00, 0x00}); !bytes.Equal(k, []byte{0x00, 0x01}) {
			t.Errorf("Seek(00 00 00) = %x", k)
		}
		return nil
	})
}

// testIndexKeyOrder checks the index role's composite keys: name + 0x00 +
// u64be version (a prefix scan per name, newest last) and u64be expires +
// digest + node (expiry order).
func testIndexKeyOrder(t *testing.T, db kv.DB) {
	versions := []uint64{1, 2, 255, 256, 65535, 1 << 32, math.MaxUint64}
	var want [][]byte
	for _, name := range []string{"a", "a.b", "ab"} { // "a"+0x00 sorts before "a."
		for _, v := range versions {
			want = append(want, cat([]byte(name), []byte{0}, u64(v)))
		}
	}
	digest := bytes.Repeat([]byte{0xff}, 32)
	for _, exp := range []uint64{0, 1, 1 << 40, math.MaxUint64} {
		want = append(want, cat([]byte{0xff, 0xff}, u64(exp), digest, []byte("node")))
	}
	shuffled := slices.Clone(want)
	rand.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	putKeys(t, db, shuffled)
	checkOrder(t, db, want)
	view(t, db, func(tx kv.Tx) error {
		prefix := []byte("a\x00")
		c, n := tx.Bucket(bkt).Cursor(), 0
		for k, _ := c.Seek(prefix); bytes.HasPrefix(k, prefix); k, _ = c.Next() {
			n++
		}
		if n != len(versions) {
			t.Errorf("prefix scan of name a found %d versions, want %d", n, len(versions))
		}
		return nil
	})
}

// testOrderProperty: 10,000 random binary keys come back in sort order.
func testOrderProperty(t *testing.T, db kv.DB) {
	rng := rand.New(rand.NewPCG(1, 2))
	seen := map[string]bool{}
	var keys [][]byte
	for len(keys) < 10000 {
		k := make([]byte, 1+rng.IntN(12))
		for i := range k {
			k[i] = byte(rng.IntN(4)) * 0x55 // 0x00 0x55 0xaa 0xff: many shared prefixes
		}
		if !seen[string(k)] {
			seen[string(k)] = true
			keys = append(keys, k)
		}
	}
	for i := 0; i < len(keys); i += 2500 { // several Updates over one bucket
		putKeys(t, db, keys[i:i+2500])
	}
	slices.SortFunc(keys, bytes.Compare)
	checkOrder(t, db, keys)
}
