package tiles

import (
	"encoding/binary"
	"fmt"

	"github.com/ronhq/ron/store/kv"
)

// Bucket and key names in the tree's kv.DB.
const (
	bucketTiles      = "tiles"
	bucketCheckpoint = "checkpoint"
)

// checkpointKey holds the latest signed checkpoint note.
var checkpointKey = []byte("note")

// tileKey is level byte ‖ index u64 BE.
func tileKey(level uint8, index uint64) []byte {
	k := make([]byte, 9)
	k[0] = level
	binary.BigEndian.PutUint64(k[1:], index)
	return k
}

// bucketSource reads tiles straight from a bucket.
func bucketSource(b kv.Bucket) tileSource {
	return func(level uint8, index uint64) []byte { return b.Get(tileKey(level, index)) }
}

// buckets returns the tree's two buckets, failing when they are missing.
func buckets(tx kv.Tx) (tiles, cp kv.Bucket, err error) {
	tiles, cp = tx.Bucket(bucketTiles), tx.Bucket(bucketCheckpoint)
	if tiles == nil || cp == nil {
		return nil, nil, fmt.Errorf("%w: buckets missing", ErrCorrupt)
	}
	return tiles, cp, nil
}

// storedCheckpoint reads and verifies the stored checkpoint; ok is false
// when none is stored.
func storedCheckpoint(b kv.Bucket, k *LogKey) (cp Checkpoint, ok bool, err error) {
	msg := b.Get(checkpointKey)
	if msg == nil {
		return Checkpoint{}, false, nil
	}
	cp, err = ParseCheckpoint(msg, k.Verifier())
	if err != nil {
		return Checkpoint{}, false, fmt.Errorf("tiles: stored checkpoint: %w", err)
	}
	return cp, true, nil
}
