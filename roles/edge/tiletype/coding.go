package tiletype

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/zstd"
)

// Coding is how a tile's bytes are stored (docs/edge.md §6.3).
type Coding uint8

// Codings. Unknown is PMTiles tile compression 0: the bytes are served as
// stored, without a Content-Encoding.
const (
	None Coding = iota
	Gzip
	Brotli
	Zstd
	Unknown
)

// ErrDecodedCap: decoding produced more bytes than allowed.
var ErrDecodedCap = errors.New("tiletype: decoded size over the cap")

// ErrUndecodable: the bytes do not decode with their coding.
var ErrUndecodable = errors.New("tiletype: undecodable")

// MaxZstdWindow bounds the window a zstd frame may ask for, so a hostile
// frame header cannot make the decoder allocate more.
const MaxZstdWindow = 64 << 20

// String returns "none", "gzip", "brotli", "zstd" or "unknown".
func (c Coding) String() string {
	switch c {
	case None:
		return "none"
	case Gzip:
		return "gzip"
	case Brotli:
		return "brotli"
	case Zstd:
		return "zstd"
	}
	return "unknown"
}

// ContentEncoding is the HTTP content coding bytes stored with c are sent
// with: "gzip", "br" or "zstd"; "" for None and Unknown.
func (c Coding) ContentEncoding() string {
	switch c {
	case Gzip:
		return "gzip"
	case Brotli:
		return "br"
	case Zstd:
		return "zstd"
	}
	return ""
}

// ETagSuffix is appended to a tile's ETag when its bytes are sent
// content-encoded (docs/edge.md §4.4): "-gz", "-br", "-zst"; "" for None and Unknown.
func (c Coding) ETagSuffix() string {
	switch c {
	case Gzip:
		return "-gz"
	case Brotli:
		return "-br"
	case Zstd:
		return "-zst"
	}
	return ""
}

// SniffCoding reports how an MBTiles tile is stored (docs/edge.md §4.5): Gzip when its first
// bytes are 1f 8b, otherwise None.
func SniffCoding(tile []byte) Coding {
	if bytes.HasPrefix(tile, magicGzip) {
		return Gzip
	}
	return None
}

// NewReader returns a reader of the decoded bytes of r. None and Unknown
// return r unchanged (nothing is known to decode). Gzip accepts
// multi-member streams; zstd decodes synchronously (no goroutines) with a
// window of at most MaxZstdWindow. Close releases the decoder.
func (c Coding) NewReader(r io.Reader) (io.ReadCloser, error) {
	switch c {
	case Gzip:
		return gzip.NewReader(r)
	case Brotli:
		return io.NopCloser(brotli.NewReader(r)), nil
	case Zstd:
		d, err := zstd.NewReader(r, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true),
			zstd.WithDecoderMaxWindow(MaxZstdWindow))
		if err != nil {
			return nil, err
		}
		return d.IOReadCloser(), nil
	}
	return io.NopCloser(r), nil
}

// Decode returns b decoded, at most max bytes. None and Unknown return b
// itself. Output over max is an error wrapping ErrDecodedCap; bytes that do
// not decode give an error wrapping ErrUndecodable.
func (c Coding) Decode(b []byte, max int64) ([]byte, error) {
	if c == None || c >= Unknown {
		if int64(len(b)) > max {
			return nil, fmt.Errorf("%w: %d bytes, cap %d", ErrDecodedCap, len(b), max)
		}
		return b, nil
	}
	d, err := c.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrUndecodable, c, err)
	}
	defer d.Close()
	var buf bytes.Buffer
	n, err := buf.ReadFrom(io.LimitReader(d, max+1))
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrUndecodable, c, err)
	}
	if n > max {
		return nil, fmt.Errorf("%w: %s output over %d bytes", ErrDecodedCap, c, max)
	}
	return buf.Bytes(), nil
}
