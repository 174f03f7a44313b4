package tiles

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"
)

// A pack replaced by rename: the next requests get the new ETag, a
// conditional request with the old one fails (If-Match → 412), and a read
// holding the old pack still completes with the old bytes.
func TestArchiveReplaced(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		old := archive500(t)
		ev := newEnv(t, Settings{}, func(dir string) { writeFile(t, dir, "p.pmtiles", old) })
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			_ = ev.set.Run(ctx)
		}()
		defer func() { cancel(); <-done }()

		oldTag := ev.get("/packs/p.pmtiles").Header().Get("ETag")
		held, release, ok := ev.set.Acquire("p")
		if !ok {
			t.Fatal("not mounted")
		}
		next := buildMVT(t, `{"name":"next"}`)
		tmp := filepath.Join(ev.dir, ".p.pmtiles.tmp")
		writeFile(t, ev.dir, ".p.pmtiles.tmp", next)
		if err := os.Rename(tmp, filepath.Join(ev.dir, "p.pmtiles")); err != nil {
			t.Fatal(err)
		}
		time.Sleep(10 * time.Second) // several polls: the stat settles, the new file mounts
		synctest.Wait()

		w := ev.get("/packs/p.pmtiles")
		if w.Code != 200 || w.Header().Get("ETag") == oldTag || !bytes.Equal(w.Body.Bytes(), next) {
			t.Fatalf("after replace: %d %s (old %s)", w.Code, w.Header().Get("ETag"), oldTag)
		}
		if w := ev.get("/packs/p.pmtiles", "If-Match", oldTag, "Range", "bytes=0-9"); w.Code != 412 {
			t.Errorf("If-Match old tag: %d", w.Code)
		}
		if w := ev.get("/packs/p.pmtiles", "If-Range", oldTag, "Range", "bytes=0-9"); w.Code != 200 || w.Body.Len() != len(next) {
			t.Errorf("If-Range old tag: %d", w.Code)
		}
		buf := make([]byte, len(old))
		if n, err := held.ReadAt(buf, 0); n != len(old) || err != nil || !bytes.Equal(buf, old) {
			t.Errorf("held old pack: %d %v", n, err)
		}
		release()
	})
}
