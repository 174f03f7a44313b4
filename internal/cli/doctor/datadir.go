package doctor

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/ronhq/ron/internal/cli"
	"github.com/ronhq/ron/store/durable"
)

// Free-space thresholds below which free_space warns.
const (
	lowFreeBytes   = 1 << 30 // 1 GiB
	lowFreePercent = 5
)

// probeBytes is what the fsync probe writes.
const probeBytes = 4096

// checkDataDir probes the data dir and the enabled roles' existing
// subfolders: write, fsync, rename and remove a probe file.
func checkDataDir(n Node, sys System) []Result {
	if n.Amnesia {
		return []Result{{Check: "data_dir", Level: Skip, Message: "amnesia: nothing is written to disk"}}
	}
	fix := fmt.Sprintf("make %s a directory writable by uid %d (e.g. chown -R ron:ron %[1]s) or set data_dir", n.DataDir, sys.Getuid())
	fi, err := os.Stat(n.DataDir)
	if errors.Is(err, fs.ErrNotExist) {
		parent := existingAncestor(n.DataDir)
		if err := probe(parent); err != nil {
			return []Result{{Check: "data_dir", Level: Fail, Message: fmt.Sprintf("%s does not exist and %s cannot be written: %v", n.DataDir, parent, err), Fix: fix}}
		}
		return []Result{{Check: "data_dir", Level: Warn, Message: fmt.Sprintf("%s does not exist yet; ron serve creates it (%s is writable)", n.DataDir, parent),
			Fix: "start ron once, or create it: install -d -o ron -g ron -m 0750 " + n.DataDir}}
	}
	if err != nil {
		return []Result{{Check: "data_dir", Level: Fail, Message: err.Error(), Fix: fix}}
	}
	if !fi.IsDir() {
		return []Result{{Check: "data_dir", Level: Fail, Message: n.DataDir + " is not a directory", Fix: fix}}
	}
	out := []Result{probeResult("data_dir", n.DataDir, fix)}
	for _, role := range n.Roles {
		sub := filepath.Join(n.DataDir, role)
		if fi, err := os.Stat(sub); err == nil && fi.IsDir() {
			out = append(out, probeResult("data_dir:"+role, sub, fmt.Sprintf("chown -R ron:ron %s (it may have been created by another user, e.g. root)", sub)))
		} else if err == nil {
			out = append(out, Result{Check: "data_dir:" + role, Level: Fail, Message: sub + " is not a directory", Fix: "move " + sub + " away; ron serve recreates it"})
		}
	}
	return out
}

// probeResult turns one probe into a result.
func probeResult(check, dir, fix string) Result {
	if err := probe(dir); err != nil {
		return Result{Check: check, Level: Fail, Message: fmt.Sprintf("%s: %v", dir, err), Fix: fix}
	}
	return Result{Check: check, Level: OK, Message: dir + ": write, fsync, rename and remove work"}
}

// probe writes a probe file in dir, fsyncs it, renames it, fsyncs dir and
// removes it: the steps of every durable write (docs/architecture.md §8). The
// error names the step that failed.
func probe(dir string) error {
	suffix := make([]byte, 8)
	_, _ = rand.Read(suffix)
	tmp := filepath.Join(dir, ".ron-doctor-"+hex.EncodeToString(suffix)+".tmp")
	final := tmp[:len(tmp)-len(".tmp")]
	if err := durable.WriteFileSync(tmp, make([]byte, probeBytes), 0o600); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("write+fsync: %w", err)
	}
	if err := os.Rename(tmp, final); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("rename: %w", err)
	}
	if err := durable.SyncDir(dir); err != nil {
		_ = os.Remove(final)
		return fmt.Errorf("fsync dir: %w", err)
	}
	if err := os.Remove(final); err != nil {
		return fmt.Errorf("remove: %w", err)
	}
	return nil
}

// existingAncestor is the nearest existing directory at or above path.
func existingAncestor(path string) string {
	p, _ := filepath.Abs(path)
	for {
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			return p
		}
		up := filepath.Dir(p)
		if up == p {
			return p
		}
		p = up
	}
}

// checkSpace compares the data dir's free space with storage's
// min_free_bytes (fail) and with 1 GiB and 5 % (warn).
func checkSpace(n Node, sys System) Result {
	if n.Amnesia {
		return Result{Check: "free_space", Level: Skip, Message: "amnesia: nothing is written to disk"}
	}
	dir := existingAncestor(n.DataDir)
	sp, err := sys.Statfs(dir)
	if err != nil {
		return Result{Check: "free_space", Level: Fail, Message: fmt.Sprintf("statfs %s: %v", dir, err), Fix: "check the filesystem holding data_dir"}
	}
	pct := 100.0
	if sp.Total > 0 {
		pct = 100 * float64(sp.Avail) / float64(sp.Total)
	}
	msg := fmt.Sprintf("%s free on %s (%.1f %% of %s)", cli.Bytes(int64(sp.Avail)), dir, pct, cli.Bytes(int64(sp.Total)))
	fix := "free space on that filesystem or move data_dir to a larger one"
	switch {
	case n.MinFreeBytes > 0 && sp.Avail < n.MinFreeBytes:
		return Result{Check: "free_space", Level: Fail, Message: msg + "; storage refuses writes below storage.min_free_bytes = " + cli.Bytes(int64(n.MinFreeBytes)), Fix: fix}
	case sp.Avail < lowFreeBytes || pct < lowFreePercent:
		return Result{Check: "free_space", Level: Warn, Message: msg + "; below 1 GiB or 5 %", Fix: fix}
	}
	return Result{Check: "free_space", Level: OK, Message: msg}
}
