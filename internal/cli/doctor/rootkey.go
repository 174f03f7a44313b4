package doctor

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/ronhq/ron/httpx/auth"
)

// checkRootKey checks the root key file (cluster.root_key_file, else
// <data_dir>/keys/root.key): a regular file of mode 0600 or stricter, owned
// by the user running the doctor (run it as the user ron runs as), in a
// directory closed to others, and well-formed. A missing data-dir key is
// fine (ron serve creates it); a missing root_key_file is not (it is never
// created), except in amnesia mode.
func checkRootKey(n Node, sys System) Result {
	path := auth.KeyPath(n.DataDir)
	if n.RootKeyFile != "" {
		path = n.RootKeyFile
	}
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return missingRootKey(n, path)
	}
	if err != nil {
		return Result{Check: "root_key", Level: Fail, Message: err.Error(), Fix: "make " + filepath.Dir(path) + " readable by the ron user"}
	}
	if !fi.Mode().IsRegular() {
		return Result{Check: "root_key", Level: Fail, Message: fmt.Sprintf("%s is not a regular file (%s)", path, fi.Mode().Type()),
			Fix: "replace it with the key file itself (64 hex characters, mode 0600)"}
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return Result{Check: "root_key", Level: Fail, Message: fmt.Sprintf("%s has mode %04o: others may read the key that signs every token", path, perm),
			Fix: "chmod 600 " + path + " (and mint new tokens if others may have read it)"}
	}
	if uid, ok := owner(fi); ok && uid != sys.Getuid() {
		return Result{Check: "root_key", Level: Fail, Message: fmt.Sprintf("%s is owned by uid %d, not by uid %d running this check", path, uid, sys.Getuid()),
			Fix: "chown ron:ron " + path + ", and run the doctor as the user ron runs as (sudo -u ron ron doctor)"}
	}
	if _, err := auth.ReadKeyFile(path); err != nil {
		return Result{Check: "root_key", Level: Fail, Message: err.Error(),
			Fix: "restore the key from a backup, or remove it to have a new one created (tokens minted before stop working)"}
	}
	if dfi, err := os.Stat(filepath.Dir(path)); err == nil && dfi.Mode().Perm()&0o077 != 0 {
		return Result{Check: "root_key", Level: Warn, Message: fmt.Sprintf("%s has mode %04o", filepath.Dir(path), dfi.Mode().Perm()),
			Fix: "chmod 700 " + filepath.Dir(path)}
	}
	return Result{Check: "root_key", Level: OK, Message: fmt.Sprintf("%s: mode %04o, owner uid %d, well-formed", path, fi.Mode().Perm(), sys.Getuid())}
}

// missingRootKey judges a root key file that does not exist.
func missingRootKey(n Node, path string) Result {
	switch {
	case n.Amnesia:
		return Result{Check: "root_key", Level: OK, Message: path + " does not exist: amnesia keeps an in-memory key (no other node shares it)"}
	case n.RootKeyFile != "":
		return Result{Check: "root_key", Level: Fail, Message: path + " (cluster.root_key_file) does not exist: ron never creates it",
			Fix: "copy the cluster's shared key there (mode 0600, owned by the ron user)"}
	}
	return Result{Check: "root_key", Level: OK, Message: path + " does not exist yet: ron serve creates it (mode 0600)"}
}

// owner is the file's owner uid, where the platform reports one.
func owner(fi fs.FileInfo) (int, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(st.Uid), true
}
