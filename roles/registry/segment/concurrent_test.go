package segment

import (
	"errors"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
)

// TestConcurrentReadDuringAppend runs readers, a scanner and a pruner against
// the appending goroutine; under -race it checks the locking, and every
// record a reader gets must be complete and correct.
func TestConcurrentReadDuringAppend(t *testing.T) {
	forEachFS(t, func(t *testing.T, fsys FS, dir string) {
		opt := opts(fsys, -1)
		opt.IndexCache = 2
		l, _ := mustOpen(t, dir, opt)
		var done atomic.Bool
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		wg.Go(func() {
			defer done.Store(true)
			for v := uint64(0); v < 1500; v += 25 {
				if err := l.Append(records(v, 25)); err != nil {
					errs <- err
					return
				}
			}
		})
		for i := range 3 {
			wg.Go(func() { errs <- readLoop(l, &done, uint64(i)) })
		}
		wg.Go(func() { errs <- scanLoop(l, &done) })
		wg.Go(func() { errs <- pruneLoop(l, &done) })
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		checkReads(t, l, l.MinIndex(), l.Next())
	})
}

// readLoop reads random published versions until done.
func readLoop(l *Log, done *atomic.Bool, seed uint64) error {
	rng := rand.New(rand.NewPCG(seed, 7))
	for ; !done.Load(); runtime.Gosched() {
		n := l.Next()
		if n == 0 {
			continue
		}
		v := rng.Uint64N(n)
		r, err := l.Read(v)
		if errors.Is(err, ErrPruned) {
			continue
		}
		if err != nil {
			return err
		}
		if want := record(v); r.Version != v || string(r.Artifact) != string(want.Artifact) {
			return errors.New("read a wrong record")
		}
		_ = l.Segments()
		_ = l.Bytes()
	}
	return nil
}

// scanLoop scans the newest records until done.
func scanLoop(l *Log, done *atomic.Bool) error {
	for ; !done.Load(); runtime.Gosched() {
		n := l.Next()
		if n < 30 {
			continue
		}
		v := n - 30
		err := l.Scan(v, n-1, func(r Record) error {
			if r.Version != v || string(r.Artifact) != string(artifact(v)) {
				return errors.New("scanned a wrong record")
			}
			v++
			return nil
		})
		if err != nil && !errors.Is(err, ErrPruned) {
			return err
		}
	}
	return nil
}

// pruneLoop keeps about 600 versions until done.
func pruneLoop(l *Log, done *atomic.Bool) error {
	for ; !done.Load(); runtime.Gosched() {
		if n := l.Next(); n > 600 {
			if _, err := l.Prune(n - 600); err != nil {
				return err
			}
		}
	}
	return nil
}
