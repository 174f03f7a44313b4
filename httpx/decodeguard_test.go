package httpx

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"testing"

	"github.com/andybalholm/brotli"
)

func gzipBytes(t testing.TB, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func brotliBytes(t testing.TB, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	bw := brotli.NewWriterLevel(&buf, brotli.BestSpeed)
	if _, err := bw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := bw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// noise returns n deterministic pseudo-random bytes (incompressible).
func noise(n int, seed uint64) []byte {
	b := make([]byte, n)
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// hexText returns n bytes of deterministic hex digits (ratio about 2 under gzip).
func hexText(n int) []byte {
	return []byte(fmt.Sprintf("%x", noise(n/2+1, 7))[:n])
}

// mixedBomb is the docs/gateway.md §11 vector: about 100 KiB of gzip inflating to 12 MiB
// (blocks of a little noise followed by many zeros).
func mixedBomb(t testing.TB) []byte {
	t.Helper()
	var plain bytes.Buffer
	for i := range 96 {
		plain.Write(noise(900, uint64(i)))
		plain.Write(make([]byte, 128<<10-900))
	}
	return gzipBytes(t, plain.Bytes())
}

// drain reads rc to the end and reports the bytes decoded and the error.
func drain(rc io.Reader) (int64, error) {
	return io.Copy(io.Discard, rc)
}

// wantErr checks that err is an *Error with status and code.
func wantErr(t *testing.T, err error, status int, code string) {
	t.Helper()
	var he *Error
	if !errors.As(err, &he) || he.Status != status || he.Code != code {
		t.Fatalf("err = %v, want %d %s", err, status, code)
	}
}

func TestGuardBodyLimitsCodings(t *testing.T) {
	plain := []byte(`{"name":"x","id":"b3:00"}`)
	cases := []struct {
		name, enc string
		body      []byte
		status    int // 0: decodes to plain
		identity  bool
	}{
		{"absent", "", plain, 0, true},
		{"identity", "identity", plain, 0, true},
		{"identity spaced", "  IDENTITY ", plain, 0, true},
		{"gzip", "gzip", gzipBytes(t, plain), 0, false},
		{"x-gzip", "x-gzip", gzipBytes(t, plain), 0, false},
		{"GZIP", "GZIP", gzipBytes(t, plain), 0, false},
		{"br", "br", brotliBytes(t, plain), 0, false},
		{"deflate", "deflate", plain, 415, false},
		{"zstd", "zstd", plain, 415, false},
		{"compress", "compress", plain, 415, false},
		{"gzip, br", "gzip, br", gzipBytes(t, plain), 415, false},
		{"br,gzip", "br,gzip", plain, 415, false},
		{"identity, gzip", "identity, gzip", gzipBytes(t, plain), 415, false},
		{"gzip, identity", "gzip, identity", gzipBytes(t, plain), 415, false},
		// RFC 9110 §5.6.1: empty list elements do not count.
		{"trailing comma", "gzip,", gzipBytes(t, plain), 0, false},
		{"empty elements", " , br ,\t", brotliBytes(t, plain), 0, false},
		{"whitespace only", " ", plain, 0, true},
		{"tab only", "\t", plain, 0, true},
		{"commas only", ",, ,", plain, 0, true},
		{"identity in an empty list", ", identity ,", plain, 0, true},
		{"identity twice", "identity, identity", plain, 415, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := io.NopCloser(bytes.NewReader(c.body))
			rc, err := GuardBodyLimits(c.enc, src, 1<<20, 10)
			if c.status != 0 {
				wantErr(t, err, c.status, CodeUnsupportedMedia)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if (rc == src) != c.identity {
				t.Fatalf("returned the body unchanged: %v, want %v", rc == src, c.identity)
			}
			got, err := io.ReadAll(rc)
			if err != nil || !bytes.Equal(got, plain) {
				t.Fatalf("decoded %q, %v", got, err)
			}
		})
	}
}

func TestGuardBodyLimitsBombs(t *testing.T) {
	zeros1M := make([]byte, 1<<20)
	zeros12M := make([]byte, 12<<20)
	brBomb := brotliBytes(t, zeros12M)
	bomb := mixedBomb(t)
	if n := len(bomb); n < 80<<10 || n > 128<<10 {
		t.Fatalf("mixed bomb is %d bytes of gzip, want about 100 KiB", n)
	}
	cases := []struct {
		name     string
		enc      string
		body     []byte
		maxBytes int64
		ratio    float64
	}{
		{"100 KiB gzip to 12 MiB, defaults", "gzip", bomb, 8 << 20, 10},
		{"100 KiB gzip to 12 MiB, absolute cap", "gzip", bomb, 8 << 20, 1000},
		{"1 MiB zeros gzip, ratio", "gzip", gzipBytes(t, zeros1M), 64 << 20, 10},
		{"12 MiB zeros gzip", "gzip", gzipBytes(t, zeros12M), 8 << 20, 10},
		{"brotli 12 MiB zeros", "br", brBomb, 8 << 20, 10},
		{"brotli 12 MiB zeros, absolute cap", "br", brBomb, 8 << 20, 1e9},
		{"brotli 1 MiB zeros, ratio", "br", brotliBytes(t, zeros1M), 64 << 20, 10},
		{"just past the floor", "gzip", gzipBytes(t, make([]byte, DecodeRatioFloor+1)), 8 << 20, 10},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rc, err := GuardBodyLimits(c.enc, io.NopCloser(bytes.NewReader(c.body)), c.maxBytes, c.ratio)
			if err != nil {
				t.Fatal(err)
			}
			n, err := drain(rc)
			wantErr(t, err, http.StatusRequestEntityTooLarge, CodeDecodedCap)
			if n > c.maxBytes || (n > DecodeRatioFloor && float64(n) > c.ratio*float64(len(c.body))) {
				t.Fatalf("%d decoded bytes escaped the caps", n)
			}
			if _, again := rc.Read(make([]byte, 10)); again != err {
				t.Fatalf("error not sticky: %v", again)
			}
		})
	}
}

// TestRatioFloor: a small, very compressible body passes the gateway's
// rule (ratio only past 64 KiB) while GuardBody keeps its strict rule.
func TestRatioFloor(t *testing.T) {
	body := gzipBytes(t, make([]byte, 60<<10))
	rc, err := GuardBodyLimits("gzip", io.NopCloser(bytes.NewReader(body)), 8<<20, 10)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := drain(rc); err != nil || n != 60<<10 {
		t.Fatalf("GuardBodyLimits: %d bytes, %v", n, err)
	}
	rc, err = GuardBody("gzip", io.NopCloser(bytes.NewReader(body)))
	if err != nil {
		t.Fatal(err)
	}
	_, err = drain(rc)
	wantErr(t, err, http.StatusRequestEntityTooLarge, CodeDecodedCap)
}

func TestGuardBodyLimitsCorrupt(t *testing.T) {
	text := hexText(256 << 10)
	gz, br := gzipBytes(t, text), brotliBytes(t, text)
	flipped := bytes.Clone(gz)
	flipped[len(flipped)/2] ^= 0xff
	brFlipped := bytes.Clone(br)
	brFlipped[len(brFlipped)/2] ^= 0xff
	cases := []struct {
		name, enc string
		body      []byte
		midStream bool // some bytes decode before the failure
	}{
		{"not gzip", "gzip", []byte("not gzip at all"), false},
		{"empty gzip", "gzip", nil, false},
		{"gzip header only", "gzip", gz[:10], false},
		{"truncated gzip", "gzip", gz[:len(gz)/2], true},
		{"gzip missing trailer", "gzip", gz[:len(gz)-4], true},
		{"corrupt gzip", "gzip", flipped, true},
		{"gzip trailing garbage", "gzip", append(bytes.Clone(gz), "garbage!!!"...), true},
		{"empty br", "br", nil, false},
		{"truncated br", "br", br[:len(br)/2], true},
		{"corrupt br", "br", brFlipped, true},
		{"garbage br", "br", noise(4096, 3), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rc, err := GuardBodyLimits(c.enc, io.NopCloser(bytes.NewReader(c.body)), 8<<20, 10)
			if err != nil {
				t.Fatalf("error before any read: %v", err)
			}
			n, err := drain(rc)
			wantErr(t, err, http.StatusBadRequest, CodeMalformed)
			if c.midStream && n == 0 {
				t.Fatal("failure expected mid-stream, got it before the first byte")
			}
		})
	}
}

func TestGuardBodyLimitsNilAndEmpty(t *testing.T) {
	if rc, err := GuardBodyLimits("", nil, 0, 0); rc != nil || err != nil {
		t.Fatalf("nil identity body: %v %v", rc, err)
	}
	rc, err := GuardBodyLimits("gzip", nil, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = drain(rc)
	wantErr(t, err, http.StatusBadRequest, CodeMalformed)
	if err := rc.Close(); err != nil {
		t.Fatal(err)
	}
	_, err = GuardBodyLimits("zstd", http.NoBody, 0, 0)
	wantErr(t, err, http.StatusUnsupportedMediaType, CodeUnsupportedMedia)
}

func TestGuardBodyLimitsDefaults(t *testing.T) {
	rc, err := GuardBodyLimits("gzip", io.NopCloser(bytes.NewReader(gzipBytes(t, make([]byte, 1<<20)))), -1, 0)
	if err != nil {
		t.Fatal(err)
	}
	n, err := drain(rc)
	wantErr(t, err, http.StatusRequestEntityTooLarge, CodeDecodedCap)
	if n > MaxDecodeRatio*(1<<20) {
		t.Fatalf("decoded %d", n)
	}
}

// source is a request body that serves data, then fails with err, counting
// its reads and whether it was closed.
type source struct {
	data   *bytes.Reader
	err    error
	reads  int
	closed bool
}

func (s *source) Read(p []byte) (int, error) {
	s.reads++
	if s.data.Len() == 0 {
		return 0, s.err
	}
	return s.data.Read(p[:min(len(p), 512)])
}

func (s *source) Close() error { s.closed = true; return nil }

func TestGuardBodySourceErrors(t *testing.T) {
	gz := gzipBytes(t, hexText(64<<10))
	half := gz[:len(gz)/2]
	capErr := NewError(http.StatusRequestEntityTooLarge, CodePayloadTooLarge, "over the cap")
	mbe := &http.MaxBytesError{Limit: 10}
	cases := []struct {
		name   string
		limits bool // GuardBodyLimits, else GuardBody
		err    error
		want   error // nil: a 400 malformed
	}{
		{"limits: *Error", true, capErr, capErr},
		{"limits: MaxBytesError", true, mbe, mbe},
		{"limits: client gone", true, io.ErrUnexpectedEOF, io.ErrUnexpectedEOF},
		{"limits: plain EOF is truncation", true, io.EOF, nil},
		{"guard: *Error", false, capErr, capErr},
		{"guard: MaxBytesError", false, mbe, mbe},
		{"guard: client gone", false, io.ErrUnexpectedEOF, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := &source{data: bytes.NewReader(half), err: c.err}
			var rc io.ReadCloser
			var err error
			if c.limits {
				rc, err = GuardBodyLimits("gzip", src, 8<<20, 10)
			} else {
				rc, err = GuardBody("gzip", src)
			}
			if err != nil {
				t.Fatal(err)
			}
			_, err = drain(rc)
			if c.want == nil {
				wantErr(t, err, http.StatusBadRequest, CodeMalformed)
			} else if !errors.Is(err, c.want) {
				t.Fatalf("err = %v, want %v", err, c.want)
			}
			if rc.Close(); !src.closed {
				t.Fatal("Close did not close the source")
			}
		})
	}
}

// TestGuardBodyLimitsLazy: nothing is read before the first Read, unlike
// GuardBody, which checks a gzip header at once.
func TestGuardBodyLimitsLazy(t *testing.T) {
	src := &source{data: bytes.NewReader([]byte("not gzip")), err: io.EOF}
	rc, err := GuardBodyLimits("gzip", src, 0, 0)
	if err != nil || src.reads != 0 {
		t.Fatalf("err %v, %d reads before the first Read", err, src.reads)
	}
	_, err = rc.Read(make([]byte, 64))
	wantErr(t, err, http.StatusBadRequest, CodeMalformed)
	_, err = GuardBody("gzip", &source{data: bytes.NewReader([]byte("not gzip")), err: io.EOF})
	wantErr(t, err, http.StatusBadRequest, CodeMalformed)
	if rc, err := GuardBody("gzip, br", http.NoBody); rc != http.NoBody || err != nil {
		t.Fatalf("GuardBody on an empty body: %v %v", rc, err)
	}
}

func FuzzGuardBodyLimits(f *testing.F) {
	f.Add("gzip", gzipBytes(f, []byte(`{"a":1}`)), int64(1<<20), 10.0)
	f.Add("br", brotliBytes(f, []byte(`{"a":1}`)), int64(1<<20), 10.0)
	f.Add("x-gzip", gzipBytes(f, make([]byte, 200<<10)), int64(1<<20), 2.5)
	f.Add("br", []byte{0x1b, 0xff}, int64(0), 0.0)
	f.Add("gzip, br", []byte("x"), int64(10), 1.0)
	f.Add(" ", []byte("00000"), int64(4), 0.0) // a whitespace-only coding list is identity
	f.Fuzz(func(t *testing.T, enc string, body []byte, maxBytes int64, ratio float64) {
		src := io.NopCloser(bytes.NewReader(body))
		rc, err := GuardBodyLimits(enc, src, maxBytes, ratio)
		if err != nil {
			wantErr(t, err, http.StatusUnsupportedMediaType, CodeUnsupportedMedia)
			return
		}
		if len(ContentCodings(enc)) == 0 {
			// No coding: the body as sent; its size is the body cap's
			// business, not the decode guard's.
			if rc != src {
				t.Fatalf("Content-Encoding %q: the body was wrapped", enc)
			}
			return
		}
		if maxBytes <= 0 {
			maxBytes = MaxDecodedBytes
		}
		if !(ratio > 0) {
			ratio = MaxDecodeRatio
		}
		out, err := io.ReadAll(io.LimitReader(rc, maxBytes+1))
		n := int64(len(out))
		if n > maxBytes {
			t.Fatalf("decoded %d bytes past the cap %d", n, maxBytes)
		}
		if n > DecodeRatioFloor && float64(n) > ratio*float64(max(len(body), 1)) {
			t.Fatalf("decoded %d bytes from %d: ratio cap broken", n, len(body))
		}
		if err != nil {
			var he *Error
			if !errors.As(err, &he) || (he.Code != CodeMalformed && he.Code != CodeDecodedCap) {
				t.Fatalf("read error %v", err)
			}
		}
	})
}
