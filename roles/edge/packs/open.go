package packs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/ronhq/ron/roles/edge/mbtiles"
	"github.com/ronhq/ron/roles/edge/pmtiles"
)

// OpenOptions configure Open.
type OpenOptions struct {
	// Name is the pack name; "" = the file stem (not checked against the
	// name rule: Set does that).
	Name string
	// Verify is VerifyBasic (default) or VerifyFull (both levels).
	Verify string
	// QuickCheckMaxBytes: see Options; 0 = 64 MiB.
	QuickCheckMaxBytes int64
	// DirCache holds PMTiles leaf directories; nil = a private one.
	DirCache *pmtiles.DirCache
}

// ErrChanged: the file was replaced while it was being opened; opening it
// again later will see the new file.
var ErrChanged = errors.New("packs: file replaced while opening")

// ErrUnknownKind: the file's extension is neither .pmtiles nor .mbtiles.
var ErrUnknownKind = errors.New("packs: not a .pmtiles or .mbtiles file")

// Open opens the pack file at path (kind from its extension) and runs the
// checks of docs/edge.md §4.2 at opt.Verify's level. The pack's id is
// computed from the opened file (docs/edge.md §4.4). The caller closes the pack with
// Close. Errors wrap the pmtiles or mbtiles package's errors (ErrInvalid,
// ErrSchema, ErrCorrupt, …), ErrUnknownKind, ErrChanged, a file-system
// error, or ctx's error.
func Open(ctx context.Context, path string, opt OpenOptions) (*Pack, error) {
	kind, ok := KindOf(path)
	if !ok {
		return nil, fmt.Errorf("%s: %w", path, ErrUnknownKind)
	}
	if opt.Name == "" {
		opt.Name = NameOf(path)
	}
	if opt.QuickCheckMaxBytes == 0 {
		opt.QuickCheckMaxBytes = mbtiles.DefaultQuickCheckMaxBytes
	}
	var p *Pack
	var err error
	if kind == KindPMTiles {
		p, err = openPMTiles(ctx, path, opt)
	} else {
		p, err = openMBTiles(ctx, path, opt)
	}
	if err != nil {
		return nil, err
	}
	p.refs.Store(1)
	return p, nil
}

// openHead opens path, stats the open file and reads its first
// PackHeadBytes for the pack id. Only regular files are packs.
func openHead(path string) (*os.File, fileStat, []byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fileStat{}, nil, err
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = fmt.Errorf("%s: not a regular file", path)
	}
	if err != nil {
		f.Close()
		return nil, fileStat{}, nil, err
	}
	st := statOf(fi)
	head := make([]byte, min(st.size, pmtiles.PackHeadBytes))
	if _, err := io.ReadFull(io.NewSectionReader(f, 0, int64(len(head))), head); err != nil {
		f.Close()
		return nil, fileStat{}, nil, fmt.Errorf("%s: read head: %w", path, err)
	}
	return f, st, head, nil
}

// openPMTiles opens and verifies a PMTiles archive.
func openPMTiles(ctx context.Context, path string, opt OpenOptions) (*Pack, error) {
	f, st, head, err := openHead(path)
	if err != nil {
		return nil, err
	}
	id := pmtiles.PackID(pmtiles.KindPMTiles, st.size, st.mtime, head)
	cache := opt.DirCache
	if cache == nil {
		cache = pmtiles.NewDirCache(pmtiles.DirCacheOptions{MaxBytes: 4 << 20})
	}
	r, err := pmtiles.Open(ctx, f, st.size, pmtiles.Options{PackID: id, Cache: cache})
	if err == nil && opt.Verify == VerifyFull {
		err = r.VerifyFull(ctx)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	p := &Pack{name: opt.Name, path: path, id: id, kind: KindPMTiles, stat: st, pm: r, file: f, cache: cache}
	p.describePMTiles()
	return p, nil
}

// openMBTiles opens and verifies an MBTiles file. SQLite opens the file by
// path, so the path is stat'ed again afterwards: if it no longer names the
// file that was hashed, the open fails with ErrChanged.
func openMBTiles(ctx context.Context, path string, opt OpenOptions) (*Pack, error) {
	f, st, head, err := openHead(path)
	if err != nil {
		return nil, err
	}
	f.Close()
	mb, err := mbtiles.Open(ctx, path, mbtiles.Options{QuickCheckMaxBytes: opt.QuickCheckMaxBytes})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if now, err := statPath(path); err != nil || now != st {
		mb.Close()
		return nil, fmt.Errorf("%s: %w", path, ErrChanged)
	}
	if opt.Verify == VerifyFull {
		if err := mb.VerifyFull(ctx); err != nil {
			mb.Close()
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	id := pmtiles.PackID(pmtiles.KindMBTiles, st.size, st.mtime, head)
	p := &Pack{name: opt.Name, path: path, id: id, kind: KindMBTiles, stat: st, mb: mb}
	p.describeMBTiles()
	return p, nil
}
