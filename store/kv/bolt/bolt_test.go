package bolt_test

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	berrors "go.etcd.io/bbolt/errors"
	"go.uber.org/goleak"

	"github.com/ronhq/ron/store/kv"
	"github.com/ronhq/ron/store/kv/bolt"
	"github.com/ronhq/ron/store/kvtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// testOptions: InitialMmapSize lets the snapshot test keep a View open while
// an Update commits (no remap needed).
var testOptions = bolt.Options{InitialMmapSize: 1 << 20}

func open(t testing.TB, path string, opt bolt.Options) *bolt.DB {
	t.Helper()
	db, err := bolt.Open(path, opt)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return db
}

func TestConformance(t *testing.T) {
	kvtest.Run(t, func(t *testing.T) kv.DB {
		return open(t, filepath.Join(t.TempDir(), "kv.db"), testOptions)
	})
}

func TestOpenCreatesDirAndModes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "index", "sub", "index.db")
	db := open(t, path, bolt.Options{})
	defer db.Close()
	if db.Path() != path {
		t.Errorf("Path = %q", db.Path())
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("file mode = %v, %v; want 0600", fi.Mode().Perm(), err)
	}
	di, err := os.Stat(filepath.Dir(path))
	if err != nil || di.Mode().Perm()&^0o750 != 0 {
		t.Errorf("dir mode = %v, %v; want within 0750", di.Mode().Perm(), err)
	}
}

func TestReopenKeepsData(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kv.db")
	db := open(t, path, bolt.Options{})
	putN(t, db, 0, 100)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = open(t, path, bolt.Options{})
	defer db.Close()
	if n := countKeys(t, db); n != 100 {
		t.Fatalf("after reopen: %d keys, want 100", n)
	}
}

func TestSecondOpenLocked(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kv.db")
	db := open(t, path, bolt.Options{})
	defer db.Close()
	start := time.Now()
	_, err := bolt.Open(path, bolt.Options{OpenTimeout: 100 * time.Millisecond})
	if err == nil {
		t.Fatal("second Open succeeded")
	}
	if !errors.Is(err, bolt.ErrLocked) || !errors.Is(err, berrors.ErrTimeout) {
		t.Errorf("err = %v, want ErrLocked and berrors.ErrTimeout", err)
	}
	if !strings.Contains(err.Error(), "database locked by another process") {
		t.Errorf("message %q lacks the locked text", err)
	}
	if waited := time.Since(start); waited > 5*time.Second {
		t.Errorf("Open waited %v with a 100ms timeout", waited) // generous: not a timing assertion
	}
}

func TestStats(t *testing.T) {
	db := open(t, filepath.Join(t.TempDir(), "kv.db"), bolt.Options{})
	defer db.Close()
	putN(t, db, 0, 10)
	countKeys(t, db)
	if s := db.Stats(); s.ReadTxs < 1 || s.OpenReadTxs != 0 {
		t.Errorf("Stats = %+v", s)
	}
}

// --- crash durability ---

const crashEnv = "RON_KV_BOLT_CRASH_CHILD"

// TestCrashChild is the child process of TestCrashDurability: it commits
// Updates forever, printing each key after its Update returned.
func TestCrashChild(t *testing.T) {
	path := os.Getenv(crashEnv)
	if path == "" {
		t.Skip("helper process for TestCrashDurability")
	}
	db, err := bolt.Open(path, bolt.Options{})
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(2)
	}
	for i := uint64(0); ; i++ {
		if err := db.Update(context.Background(), putFn(i)); err != nil {
			fmt.Println("error:", err)
			os.Exit(2)
		}
		fmt.Println("ack", i)
	}
}

// TestCrashDurability kills a child with SIGKILL while it commits and checks
// that every acknowledged Update survived.
func TestCrashDurability(t *testing.T) {
	const acks = 200
	path := filepath.Join(t.TempDir(), "kv.db")
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), crashEnv+"="+path)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	last := readAcks(t, out, acks)
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait() // killed: the error is expected
	db := open(t, path, bolt.Options{})
	defer db.Close()
	n := countKeys(t, db)
	if n < last+1 {
		t.Fatalf("after kill -9: %d keys, but %d Updates were acknowledged", n, last+1)
	}
	t.Logf("acknowledged %d (read), found %d", last+1, n)
}

// readAcks reads "ack i" lines until i reaches want-1 and returns the last i.
func readAcks(t *testing.T, out interface{ Read([]byte) (int, error) }, want int) int {
	t.Helper()
	sc := bufio.NewScanner(out)
	last := -1
	for last < want-1 && sc.Scan() {
		line := sc.Text()
		rest, ok := strings.CutPrefix(line, "ack ")
		if !ok {
			if strings.HasPrefix(line, "error:") {
				t.Fatalf("child: %s", line)
			}
			continue // test framework chatter
		}
		i, err := strconv.Atoi(rest)
		if err != nil || i != last+1 {
			t.Fatalf("bad ack line %q after %d", line, last)
		}
		last = i
	}
	if last < want-1 {
		t.Fatalf("child stopped after %d acks: %v", last+1, sc.Err())
	}
	return last
}

// --- helpers ---

func putFn(i uint64) func(kv.Tx) error {
	return func(tx kv.Tx) error {
		b, err := tx.CreateBucket("b")
		if err != nil {
			return err
		}
		return b.Put(binary.BigEndian.AppendUint64(nil, i), []byte("v"))
	}
}

func putN(t *testing.T, db kv.DB, from, to uint64) {
	t.Helper()
	for i := from; i < to; i++ {
		if err := db.Update(context.Background(), putFn(i)); err != nil {
			t.Fatal(err)
		}
	}
}

func countKeys(t *testing.T, db kv.DB) int {
	t.Helper()
	n := 0
	err := db.View(context.Background(), func(tx kv.Tx) error {
		b := tx.Bucket("b")
		if b == nil {
			return nil
		}
		c := b.Cursor()
		for k, _ := c.First(); k != nil; k, _ = c.Next() {
			if binary.BigEndian.Uint64(k) != uint64(n) {
				return fmt.Errorf("key %d = %x: a gap", n, k)
			}
			n++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// --- benchmarks ---

func BenchmarkUpdate(b *testing.B) {
	db := open(b, filepath.Join(b.TempDir(), "kv.db"), bolt.Options{})
	defer db.Close()
	kvtest.BenchUpdate(b, db)
}

func BenchmarkUpdateNoSync(b *testing.B) {
	db := open(b, filepath.Join(b.TempDir(), "kv.db"), bolt.Options{NoSync: true})
	defer db.Close()
	kvtest.BenchUpdate(b, db)
}

func BenchmarkView(b *testing.B) {
	db := open(b, filepath.Join(b.TempDir(), "kv.db"), bolt.Options{})
	defer db.Close()
	kvtest.BenchView(b, db)
}
