package kvtest

import (
	"bytes"
	"testing"

	"github.com/ronhq/ron/store/kv"
)

func testCursorWalk(t *testing.T, db kv.DB) {
	put(t, db, "c", "3", "a", "1", "e", "5", "b", "2", "d", "4")
	wantPairs(t, walk(t, db, true), "a", "1", "b", "2", "c", "3", "d", "4", "e", "5")
	wantPairs(t, walk(t, db, false), "e", "5", "d", "4", "c", "3", "b", "2", "a", "1")
	view(t, db, func(tx kv.Tx) error {
		c := tx.Bucket(bkt).Cursor()
		steps := []struct {
			move func() ([]byte, []byte)
			want string
		}{
			{c.First, "a"}, {c.Next, "b"}, {c.Prev, "a"}, {c.Prev, ""}, {c.Next, ""},
			{c.Last, "e"}, {c.Next, ""}, {c.Prev, ""},
		}
		for i, s := range steps {
			if k, _ := s.move(); string(k) != s.want {
				t.Errorf("step %d: key %q, want %q", i, k, s.want)
			}
		}
		return nil
	})
}

func testCursorEmpty(t *testing.T, db kv.DB) {
	update(t, db, func(tx kv.Tx) error {
		_, err := tx.CreateBucket(bkt)
		return err
	})
	view(t, db, func(tx kv.Tx) error {
		c := tx.Bucket(bkt).Cursor()
		for name, move := range map[string]func() ([]byte, []byte){
			"First": c.First, "Last": c.Last, "Next": c.Next, "Prev": c.Prev,
			"Seek": func() ([]byte, []byte) { return c.Seek([]byte("a")) },
		} {
			if k, v := move(); k != nil || v != nil {
				t.Errorf("%s on empty bucket = %q %q", name, k, v)
			}
		}
		return nil
	})
}

func testCursorUnpositioned(t *testing.T, db kv.DB) {
	put(t, db, "a", "1", "b", "2")
	view(t, db, func(tx kv.Tx) error {
		b := tx.Bucket(bkt)
		if k, _ := b.Cursor().Next(); k != nil {
			t.Errorf("Next on a fresh cursor = %q, want nil", k)
		}
		if k, _ := b.Cursor().Prev(); k != nil {
			t.Errorf("Prev on a fresh cursor = %q, want nil", k)
		}
		return nil
	})
}

func testSeek(t *testing.T, db kv.DB) {
	put(t, db, "b", "1", "d", "2", "f", "3")
	view(t, db, func(tx kv.Tx) error {
		c := tx.Bucket(bkt).Cursor()
		for _, tc := range []struct{ seek, want string }{
			{"", "b"}, {"a", "b"}, {"b", "b"}, {"c", "d"}, {"f", "f"}, {"f\x00", ""}, {"z", ""},
		} {
			if k, _ := c.Seek([]byte(tc.seek)); string(k) != tc.want {
				t.Errorf("Seek(%q) = %q, want %q", tc.seek, k, tc.want)
			}
		}
		if k, _ := c.Seek([]byte("c")); string(k) != "d" {
			t.Fatalf("Seek(c) = %q", k)
		}
		if k, _ := c.Prev(); string(k) != "b" {
			t.Errorf("Prev after Seek(c) = %q, want b", k)
		}
		if k, _ := c.Seek([]byte("z")); k != nil {
			t.Fatalf("Seek(z) = %q", k)
		}
		if k, _ := c.Prev(); k != nil {
			t.Errorf("Prev after a nil Seek = %q, want nil", k)
		}
		return nil
	})
}

func testSeekPrefix(t *testing.T, db kv.DB) {
	put(t, db, "app", "0", "apple", "1", "apply", "2", "apq", "3", "b", "4")
	view(t, db, func(tx kv.Tx) error {
		c := tx.Bucket(bkt).Cursor()
		prefix := []byte("appl")
		var got []string
		for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
			got = append(got, string(k))
		}
		if len(got) != 2 || got[0] != "apple" || got[1] != "apply" {
			t.Errorf("prefix scan = %q", got)
		}
		return nil
	})
}

// testCursorDeleteWhileWalking is the janitor's pattern: walk in order,
// deleting each visited key, stopping at a bound.
func testCursorDeleteWhileWalking(t *testing.T, db kv.DB) {
	put(t, db, "1", "", "2", "", "3", "", "4", "", "5", "", "6", "")
	update(t, db, func(tx kv.Tx) error {
		b := tx.Bucket(bkt)
		c := b.Cursor()
		var seen []string
		for k, _ := c.First(); k != nil && string(k) < "5"; k, _ = c.Next() {
			seen = append(seen, string(k))
			if err := b.Delete(k); err != nil {
				return err
			}
		}
		if len(seen) != 4 {
			t.Errorf("visited %q, want 1..4", seen)
		}
		return nil
	})
	wantPairs(t, walk(t, db, true), "5", "", "6", "")
}

func testCursorPutWhileWalking(t *testing.T, db kv.DB) {
	put(t, db, "a", "1", "c", "3", "e", "5")
	update(t, db, func(tx kv.Tx) error {
		b := tx.Bucket(bkt)
		c := b.Cursor()
		var seen []string
		for k, _ := c.First(); k != nil; k, _ = c.Next() {
			seen = append(seen, string(k))
			if string(k) == "a" { // insert ahead of and behind the cursor
				if err := b.Put([]byte("b"), []byte("2")); err != nil {
					return err
				}
				if err := b.Put([]byte("0"), []byte("0")); err != nil {
					return err
				}
			}
		}
		if got := len(seen); got != 4 || seen[1] != "b" {
			t.Errorf("visited %q, want a b c e", seen)
		}
		return nil
	})
}

func testCursorPrevAfterDelete(t *testing.T, db kv.DB) {
	put(t, db, "a", "1", "b", "2", "c", "3", "d", "4")
	update(t, db, func(tx kv.Tx) error {
		b := tx.Bucket(bkt)
		c := b.Cursor()
		var seen []string
		for k, _ := c.Last(); k != nil; k, _ = c.Prev() {
			seen = append(seen, string(k))
			if err := b.Delete(k); err != nil {
				return err
			}
		}
		if len(seen) != 4 || seen[0] != "d" || seen[3] != "a" {
			t.Errorf("backward delete walk visited %q", seen)
		}
		return nil
	})
	wantPairs(t, walk(t, db, true))
}
