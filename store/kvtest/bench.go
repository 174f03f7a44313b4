package kvtest

import (
	"context"
	"encoding/binary"
	"testing"

	"github.com/ronhq/ron/store/kv"
)

// BenchUpdate measures one Update putting one 16-byte key with a 64-byte
// value (the index's per-record cost, including the fsync on durable
// engines). Keys are new each iteration, so the bucket grows with b.N:
// memkv's per-Update copy-on-write cost is O(bucket size).
func BenchUpdate(b *testing.B, db kv.DB) {
	ctx := context.Background()
	key, val := make([]byte, 16), make([]byte, 64)
	b.ReportAllocs()
	i := uint64(0)
	for b.Loop() {
		binary.BigEndian.PutUint64(key, i*0x9e3779b97f4a7c15) // scattered keys
		i++
		err := db.Update(ctx, func(tx kv.Tx) error {
			bk, err := tx.CreateBucket(bkt)
			if err != nil {
				return err
			}
			return bk.Put(key, val)
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}

// BenchView measures one View doing one Get in a bucket of 10,000 keys.
func BenchView(b *testing.B, db kv.DB) {
	const n = 10000
	ctx := context.Background()
	err := db.Update(ctx, func(tx kv.Tx) error {
		bk, err := tx.CreateBucket(bkt)
		if err != nil {
			return err
		}
		for i := range uint64(n) {
			if err := bk.Put(binary.BigEndian.AppendUint64(nil, i), make([]byte, 64)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	key := make([]byte, 8)
	b.ReportAllocs()
	i := uint64(0)
	for b.Loop() {
		binary.BigEndian.PutUint64(key, (i*7919)%n)
		i++
		err := db.View(ctx, func(tx kv.Tx) error {
			if tx.Bucket(bkt).Get(key) == nil {
				b.Fatal("missing key")
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}
