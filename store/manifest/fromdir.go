package manifest

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sync/errgroup"

	"github.com/ronhq/ron/store"
)

// DefaultConcurrency is the number of uploads FromDir runs at once when
// FromDirOptions.Concurrency is not positive.
const DefaultConcurrency = 4

// PutFunc uploads the regular file at path (an OS path under the root given
// to FromDir) whose manifest path is rel ('/'-separated, relative to the
// root). It returns the object's id, its size and its media type; an empty
// type makes FromDir use GuessType(rel). It is called concurrently.
type PutFunc func(ctx context.Context, path, rel string) (id store.ID, size int64, typ string, err error)

// FromDirOptions tunes FromDir. The zero value is valid.
type FromDirOptions struct {
	// Meta becomes the manifest's meta (nil means empty); it must respect
	// the meta limits.
	Meta map[string]string
	// Concurrency bounds the uploads in flight; <= 0 means DefaultConcurrency.
	Concurrency int
	// Warn, if set, receives one line per skipped file (symlinks and other
	// non-regular files). It is only called from the goroutine running
	// FromDir, before any upload starts.
	Warn func(string)
}

// FromDir builds the manifest of the directory tree at root (a symlink as
// root is followed; it must resolve to a directory). Every regular file
// below root is uploaded through put, at most opt.Concurrency at a time, and
// becomes an entry keyed by its '/'-separated path relative to root.
// Symlinks are never followed below root and, like other non-regular files
// (devices, pipes, sockets), are skipped with a warning; empty directories
// leave no trace. Files whose relative path breaks the path rules (a '\' or
// control byte in a name, invalid UTF-8, over 1024 bytes) fail the whole
// call before any upload starts.
//
// The result does not depend on upload order or timing; it is checked with
// the writer rules (so Encode of it succeeds). The first error from put, the
// walk or ctx cancels the remaining uploads and is returned.
func FromDir(ctx context.Context, root string, put PutFunc, opt FromDirOptions) (ManifestV1, error) {
	files, err := walk(ctx, root, opt.Warn)
	if err != nil {
		return ManifestV1{}, err
	}
	entries, err := upload(ctx, files, put, opt.Concurrency)
	if err != nil {
		return ManifestV1{}, err
	}
	m := ManifestV1{Entries: entries, Meta: make(map[string]string, len(opt.Meta))}
	for k, v := range opt.Meta {
		m.Meta[k] = v
	}
	if _, err := Encode(m); err != nil {
		return ManifestV1{}, err
	}
	return m, nil
}

// file is one regular file found by walk.
type file struct {
	path string // OS path, for put
	rel  string // manifest path
}

// walk lists the regular files under root in lexical order, warning about
// skipped ones and validating every relative path.
func walk(ctx context.Context, root string, warn func(string)) ([]file, error) {
	root, err := resolveRoot(root)
	if err != nil {
		return nil, err
	}
	var files []file
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if d.IsDir() || !keep(p, d, warn) {
			return nil
		}
		f, err := newFile(root, p)
		if err != nil {
			return err
		}
		files = append(files, f)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("manifest: walk %s: %w", root, err)
	}
	return files, nil
}

// resolveRoot follows a symlinked root and requires a directory.
func resolveRoot(root string) (string, error) {
	r, err := filepath.EvalSymlinks(root)
	if err != nil {
		return "", fmt.Errorf("manifest: %w", err)
	}
	info, err := os.Stat(r)
	if err != nil {
		return "", fmt.Errorf("manifest: %w", err)
	}
	if !info.IsDir() {
		return "", fmt.Errorf("manifest: %s is not a directory", root)
	}
	return r, nil
}

// keep reports whether a non-directory walk entry is a regular file; it
// warns about anything else.
func keep(p string, d fs.DirEntry, warn func(string)) bool {
	switch t := d.Type(); {
	case t.IsRegular():
		return true
	case t&fs.ModeSymlink != 0:
		warnf(warn, "skipping symlink %s", p)
	default:
		warnf(warn, "skipping non-regular file %s (%s)", p, t)
	}
	return false
}

func warnf(warn func(string), format string, args ...any) {
	if warn != nil {
		warn(fmt.Sprintf(format, args...))
	}
}

// newFile computes and validates the manifest path of p.
func newFile(root, p string) (file, error) {
	rel, err := filepath.Rel(root, p)
	if err != nil {
		return file{}, err
	}
	rel = filepath.ToSlash(rel)
	if err := checkPath(rel); err != nil {
		return file{}, fmt.Errorf("file %s: %w", p, err)
	}
	return file{path: p, rel: rel}, nil
}

// upload runs put over files with at most limit calls in flight and
// collects the entries; results are stored by index, so order of completion
// does not matter.
func upload(ctx context.Context, files []file, put PutFunc, limit int) (map[string]Entry, error) {
	if limit <= 0 {
		limit = DefaultConcurrency
	}
	results := make([]Entry, len(files))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(limit)
	for i, f := range files {
		if gctx.Err() != nil {
			break
		}
		g.Go(func() error { return putOne(gctx, put, f, &results[i]) })
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return collect(files, results), nil
}

// putOne uploads f and fills in its entry, guessing a missing type.
func putOne(ctx context.Context, put PutFunc, f file, into *Entry) error {
	id, size, typ, err := put(ctx, f.path, f.rel)
	if err != nil {
		return fmt.Errorf("manifest: put %s: %w", f.rel, err)
	}
	if typ == "" {
		typ = GuessType(f.rel)
	}
	*into = Entry{ID: id, Size: size, Type: typ}
	return checkEntry(f.rel, *into)
}

func collect(files []file, results []Entry) map[string]Entry {
	m := make(map[string]Entry, len(files))
	for i, f := range files {
		m[f.rel] = results[i]
	}
	return m
}
