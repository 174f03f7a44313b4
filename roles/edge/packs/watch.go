package packs

import (
	"context"
	"errors"
	"io/fs"
	goruntime "runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ronhq/ron/runtime"
)

// mountTimeout bounds one open-and-verify attempt (full verification of a
// large MBTiles file reads every tile).
const mountTimeout = 5 * time.Minute

// job is one decision of a poll: open the file (err nil) or record a
// failure known without opening (err set).
type job struct {
	cand     candidate
	st       fileStat // the stat that triggered the job; zero when unknown
	reverify bool     // corruption was reported: verify at the full level
	pack     *Pack    // result
	err      error    // result, or the failure known beforehand
	opened   bool     // an open was attempted
}

// Mount discovers the packs and mounts them all at once, concurrently, at
// the configured level (docs/edge.md §4.1–4.2). Packs that fail are
// recorded (Missing, Status). The error is only for a Dir that cannot be
// read.
func (s *Set) Mount(ctx context.Context) error {
	return s.poll(ctx, true)
}

// Run polls every Options.Poll until ctx ends (docs/edge.md §4.3) and returns nil. The
// caller runs it as the role's "pack_watch" task and counts it
// (ron_tasks_spawned_total / ron_tasks_canceled_total{kind="pack_watch"}).
func (s *Set) Run(ctx context.Context) error {
	for runtime.Sleep(ctx, s.options().Poll) {
		_ = s.poll(ctx, false)
	}
	return nil
}

// poll lists and stats the pack files, decides what to open, opens it and
// swaps the snapshot. initial (Mount) acts on every file at once; later
// polls act on a change once the stat is equal on two consecutive polls.
func (s *Set) poll(ctx context.Context, initial bool) error {
	if !s.busy.CompareAndSwap(false, true) {
		return nil
	}
	defer s.busy.Store(false)
	opt := s.options()
	cands, err := discover(opt)
	// A missing folder holds no packs (listed files stay) once the set
	// runs, or from the start when it is the optional default folder; any
	// other listing error keeps what is mounted.
	missing := errors.Is(err, fs.ErrNotExist)
	if err != nil && !(missing && (!initial || opt.DirOptional)) {
		s.dirFailed(err)
		if initial {
			return err
		}
		return nil
	}
	stats := statAll(cands)
	jobs, removed := s.plan(cands, stats, initial)
	s.openAll(ctx, jobs, opt)
	s.apply(jobs, removed, opt)
	return nil
}

// statResult is one candidate's stat.
type statResult struct {
	st  fileStat
	err error
}

// statAll stats every candidate without a known error.
func statAll(cands map[string]candidate) map[string]statResult {
	out := make(map[string]statResult, len(cands))
	for name, c := range cands {
		if c.err == nil {
			st, err := statPath(c.path)
			out[name] = statResult{st, err}
		}
	}
	return out
}

// dirFailed records a Dir listing failure as the last error.
func (s *Set) dirFailed(err error) {
	s.log.Error().Err(err).Msg("cannot list the packs folder")
	s.mu.Lock()
	s.last = lastError{msg: err.Error()}
	s.mu.Unlock()
}

// openAll runs the open jobs on at most GOMAXPROCS goroutines, each bounded
// by mountTimeout, and waits for them.
func (s *Set) openAll(ctx context.Context, jobs []*job, opt Options) {
	var todo []*job
	for _, j := range jobs {
		if j.err == nil {
			todo = append(todo, j)
		}
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(len(todo), goruntime.GOMAXPROCS(0)) {
		wg.Add(1)
		go func() { // pack opener: owned by this poll, which waits for it below
			defer wg.Done()
			for i := next.Add(1) - 1; i < int64(len(todo)); i = next.Add(1) - 1 {
				s.openJob(ctx, todo[i], opt)
			}
		}()
	}
	wg.Wait()
}

// openJob opens one pack for j.
func (s *Set) openJob(ctx context.Context, j *job, opt Options) {
	ctx, cancel := context.WithTimeout(ctx, mountTimeout)
	defer cancel()
	level := opt.Verify
	if j.reverify {
		level = VerifyFull
	}
	j.opened = true
	j.pack, j.err = Open(ctx, j.cand.path, OpenOptions{Name: j.cand.name, Verify: level,
		QuickCheckMaxBytes: opt.QuickCheckMaxBytes, DirCache: s.cache})
	if j.err == nil {
		j.pack.owned, j.pack.onCorrupt = true, s.reportCorrupt
	}
}
