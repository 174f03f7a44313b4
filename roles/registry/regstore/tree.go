package regstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/ronhq/ron/roles/registry/segment"
	"github.com/ronhq/ron/roles/registry/tiles"
)

// extendChunk is the most leaves one tree append (one signed checkpoint,
// one tlog.db transaction) takes.
const extendChunk = 256

// ErrTreeAhead: the checkpoint covers more leaves than HEAD + 1, so the
// log lost a covered entry.
var ErrTreeAhead = errors.New("registry: the checkpoint covers versions beyond HEAD")

// ExtendTree appends the log's versions [tree.Size(), head] to the tree,
// extendChunk leaves per signed checkpoint (each one fsynced tlog.db
// transaction under StoreTimeout), and returns the published checkpoint.
func ExtendTree(ctx context.Context, tree *tiles.Tree, log *segment.Log, head uint64) (tiles.Checkpoint, error) {
	if tree.Size() > head+1 {
		return tiles.Checkpoint{}, fmt.Errorf("%w: size %d, HEAD %d", ErrTreeAhead, tree.Size(), head)
	}
	for size := tree.Size(); size <= head; size = tree.Size() {
		to := min(head, size+extendChunk-1)
		leaves := make([][]byte, 0, to-size+1)
		err := log.Scan(size, to, func(rec segment.Record) error {
			leaves = append(leaves, rec.Artifact)
			return nil
		})
		if err != nil {
			return tiles.Checkpoint{}, fmt.Errorf("registry: read versions %d–%d: %w", size, to, err)
		}
		actx, cancel := context.WithTimeout(ctx, StoreTimeout)
		_, err = tree.Append(actx, leaves)
		cancel()
		if err != nil {
			return tiles.Checkpoint{}, err
		}
	}
	return tree.Checkpoint(), nil
}
