package objects

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/labstack/echo/v4"
	"github.com/ronhq/ron/httpx/content"
)

// sliceBlob is an in-memory Blob given as fixed slices (an
// edgecache.Slicer).
type sliceBlob struct{ parts [][]byte }

func (b sliceBlob) ReadAt(p []byte, off int64) (int, error) {
	return bytes.NewReader(bytes.Join(b.parts, nil)).ReadAt(p, off)
}

func (b sliceBlob) Slices(off, n int64) [][]byte {
	all := bytes.Join(b.parts, nil)
	end := min(off+n, int64(len(all)))
	var out [][]byte
	for _, p := range b.parts { // return sub-slices of parts, as the cache does
		if off >= int64(len(p)) {
			off, end = off-int64(len(p)), end-int64(len(p))
			continue
		}
		if end <= 0 {
			break
		}
		out = append(out, p[off:min(end, int64(len(p)))])
		off, end = 0, end-int64(len(p))
	}
	return out
}

// fileSectioner is a Blob over a file, an edgecache.FileSectioner.
type fileSectioner struct{ f *os.File }

func (b fileSectioner) ReadAt(p []byte, off int64) (int, error) { return b.f.ReadAt(p, off) }

func (b fileSectioner) Section(off, n int64) (io.Reader, error) {
	if _, err := b.f.Seek(off, io.SeekStart); err != nil {
		return nil, err
	}
	return &io.LimitedReader{R: b.f, N: n}, nil
}

// readFromRecorder records whether its ReadFrom got a file section.
type readFromRecorder struct {
	bytes.Buffer
	fromFile bool
}

func (w *readFromRecorder) ReadFrom(r io.Reader) (int64, error) {
	if lr, ok := r.(*io.LimitedReader); ok {
		_, w.fromFile = lr.R.(*os.File)
	}
	return w.Buffer.ReadFrom(r)
}

// writeCounter counts Write calls (no ReadFrom).
type writeCounter struct {
	bytes.Buffer
	writes int
}

func (w *writeCounter) Write(p []byte) (int, error) { w.writes++; return w.Buffer.Write(p) }

// TestBlobRead: memory blobs are written as their stored slices, one
// write each; disk blobs go to a ReadFrom as a file section (sendfile),
// else through a buffer; a short file is an error.
func TestBlobRead(t *testing.T) {
	data, _ := pattern(40, 100_000)
	path := filepath.Join(t.TempDir(), "blob")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	mem := sliceBlob{parts: [][]byte{data[:30_000], data[30_000:70_000], data[70_000:]}}

	w := &writeCounter{}
	if err := blobRead(mem)(w, 20_000, 60_000); err != nil || !bytes.Equal(w.Bytes(), data[20_000:80_000]) || w.writes != 3 {
		t.Fatalf("memory: %v, %d bytes in %d writes", err, w.Len(), w.writes)
	}
	rf := &readFromRecorder{}
	if err := blobRead(fileSectioner{f})(rf, 1000, 50_000); err != nil || !rf.fromFile || !bytes.Equal(rf.Bytes(), data[1000:51_000]) {
		t.Fatalf("disk with ReadFrom: %v, from file %v, %d bytes", err, rf.fromFile, rf.Len())
	}
	plain := &writeCounter{}
	if err := blobRead(fileSectioner{f})(plain, 99_000, 1000); err != nil || !bytes.Equal(plain.Bytes(), data[99_000:]) {
		t.Fatalf("disk without ReadFrom: %v, %d bytes", err, plain.Len())
	}
	if err := blobRead(fileSectioner{f})(&readFromRecorder{}, 99_000, 2000); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("short file: %v", err)
	}
}

// readFromWriter is a ResponseWriter with a ReadFrom (as net/http's).
type readFromWriter struct {
	*httptest.ResponseRecorder
	used bool
}

func (w *readFromWriter) ReadFrom(r io.Reader) (int64, error) {
	w.used = true
	return io.Copy(w.ResponseRecorder, r)
}

// TestCountWriterReadFrom: once the answer is committed a ReadFrom reaches
// the response writer's own; before, the bytes go through Write (which
// commits). Both count what they copy.
func TestCountWriterReadFrom(t *testing.T) {
	for _, committed := range []bool{true, false} {
		rw := &readFromWriter{ResponseRecorder: httptest.NewRecorder()}
		resp := echo.NewResponse(rw, echo.New())
		if committed {
			resp.WriteHeader(http.StatusOK)
		}
		cw := &countWriter{w: resp}
		n, err := cw.ReadFrom(bytes.NewReader(make([]byte, 5000)))
		if err != nil || n != 5000 || cw.n != 5000 || rw.Body.Len() != 5000 || rw.used != committed || resp.Size != 5000 {
			t.Fatalf("committed %v: n %d err %v counted %d used %v size %d", committed, n, err, cw.n, rw.used, resp.Size)
		}
	}
}

// TestEtagOf: the ETag is the quoted id.
func TestEtagOf(t *testing.T) {
	for seed := range uint64(5) {
		_, id := pattern(seed, 10)
		if got, want := content.ETag(id), `"`+id.String()+`"`; got != want {
			t.Fatalf("etagOf = %s, want %s", got, want)
		}
	}
}
