package fs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/ronhq/ron/store"
)

// Upgrade implements store.BlobStore: a sidecar whose header states v2 is
// left alone after reading only that header (the read path checks and, if
// need be, rebuilds it); a valid v1 sidecar is rewritten as v2 with its
// content type and creation time; a missing or invalid one is rebuilt as a
// read would (OnSidecarRebuilt). The data is hashed whole under the CPU
// semaphore, once at a time per object (shared with rebuilds), and the new
// sidecar replaces the old by rename: a crash leaves the old sidecar or the
// new one, never a mix.
func (s *Store) Upgrade(ctx context.Context, id store.ID) (bool, error) {
	if err := s.check(ctx); err != nil {
		return false, err
	}
	fi, err := os.Stat(s.dataPath(id))
	if err != nil {
		return false, s.missing(id, err)
	}
	if s.headerVersion(id) == store.SidecarV2 {
		s.cache.dropV1(id) // a read may have cached the v1 file just before the rename
		return false, nil  // a v2 sidecar's validity is the read path's to check
	}
	b, err := os.ReadFile(s.metaPath(id))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return false, fmt.Errorf("fs: read sidecar: %w", err)
	}
	old, derr := store.DecodeSidecar(b, id)
	switch {
	case derr == nil && old.Size == fi.Size() && old.Version == store.SidecarV2:
		return false, nil
	case derr == nil && old.Size == fi.Size():
		_, err = s.rebuildOnce(ctx, id, &old)
	default:
		_, err = s.rebuildOnce(ctx, id, nil)
	}
	return err == nil, err
}

// headerVersion reads the version field of id's sidecar (0 when it cannot
// be read).
func (s *Store) headerVersion(id store.ID) int {
	f, err := os.Open(s.metaPath(id))
	if err != nil {
		return 0
	}
	defer f.Close()
	var hdr [6]byte
	if _, err := io.ReadFull(f, hdr[:]); err != nil {
		return 0
	}
	return store.SidecarVersion(hdr[:])
}
