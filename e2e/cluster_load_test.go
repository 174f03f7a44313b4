package e2e

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// writeLoad writes a list of objects with a few concurrent writers, object
// i through bases[i % len(bases)], and records which were acknowledged.
// Failed writes (a killed coordinator, a 503) are counted, not fatal.
type writeLoad struct {
	objs  []clObject
	bases []string
	next  atomic.Int64
	done  sync.WaitGroup

	mu      sync.Mutex
	acked   []clObject           // replies 200/201 with copies 2, in ack order
	ackedAt map[string]time.Time // id → when its reply arrived
	badCopy []string             // acknowledged with copies other than 2
	failed  map[string][]string  // base → errors
}

// startLoad starts `workers` writers over objs; they end when every object
// was tried once.
func (c *testCluster) startLoad(objs []clObject, bases []string, workers int) *writeLoad {
	l := &writeLoad{objs: objs, bases: bases, failed: map[string][]string{}, ackedAt: map[string]time.Time{}}
	for range workers {
		l.done.Add(1)
		go l.worker(c) // owned by l; ends when the list is exhausted (wait)
	}
	return l
}

func (l *writeLoad) worker(c *testCluster) {
	defer l.done.Done()
	for {
		i := int(l.next.Add(1)) - 1
		if i >= len(l.objs) {
			return
		}
		base := l.bases[i%len(l.bases)]
		a, err := c.postObject(base, l.objs[i])
		l.mu.Lock()
		switch {
		case err != nil:
			l.failed[base] = append(l.failed[base], err.Error())
		case !a.twoCopies():
			l.badCopy = append(l.badCopy, fmt.Sprintf("%s via %s: copies %s", l.objs[i].id, base, fmtCopies(a.Copies)))
		default:
			l.acked = append(l.acked, l.objs[i])
			l.ackedAt[l.objs[i].id] = time.Now()
		}
		l.mu.Unlock()
	}
}

// ackedNow returns the objects acknowledged so far.
func (l *writeLoad) ackedNow() []clObject {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]clObject(nil), l.acked...)
}

// ackAge is how long ago id was acknowledged (diagnosis).
func (l *writeLoad) ackAge(id string) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	return time.Since(l.ackedAt[id])
}

// wait waits (bounded) until every writer has ended.
func (l *writeLoad) wait(limit time.Duration) error {
	ended := make(chan struct{})
	go func() { // ends when the writers do; they end once the list is exhausted
		l.done.Wait()
		close(ended)
	}()
	t := time.NewTimer(limit)
	defer t.Stop()
	select {
	case <-ended:
		return nil
	case <-t.C:
		return fmt.Errorf("write load still running after %s", limit)
	}
}

// summary describes the failures per base.
func (l *writeLoad) summary() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var parts []string
	for base, errs := range l.failed {
		parts = append(parts, fmt.Sprintf("%s: %d failed (first: %s)", base, len(errs), errs[0]))
	}
	return fmt.Sprintf("%d acknowledged of %d; %s", len(l.acked), len(l.objs), strings.Join(parts, "; "))
}

// dirObjectBytes sums the sizes of the object files (not sidecars) under
// n's storage/objects: what the node held.
func dirObjectBytes(n *clNode) (int64, error) {
	var total int64
	err := filepath.WalkDir(filepath.Join(n.storageDir(), "objects"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasSuffix(p, ".meta") {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		total += info.Size()
		return nil
	})
	return total, err
}
