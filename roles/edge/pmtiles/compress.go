package pmtiles

import (
	"bytes"
	"errors"
	"fmt"
	"io"
)

// MaxDirBytes caps a directory, compressed and decompressed, and the
// metadata (docs/edge.md §5: 32 MiB).
const MaxDirBytes = 32 << 20

// NewDecoder returns a reader of the decompressed bytes of r.
type NewDecoder func(r io.Reader) (io.ReadCloser, error)

// Codecs maps compression codes to decoders. Entries override or extend the
// built-in ones (none, gzip, brotli, zstd: tiletype.Coding.NewReader); a nil
// Codecs uses only the built-ins. Code 0 (unknown) and codes above 4 never
// decode unless an entry is given for them.
type Codecs map[Compression]NewDecoder

// NewReader returns a decoder of r for comp, or ErrUnsupportedCompression
// when there is none.
func (c Codecs) NewReader(comp Compression, r io.Reader) (io.ReadCloser, error) {
	if f := c[comp]; f != nil {
		return f(r)
	}
	if comp < CompressionNone || comp > CompressionZstd {
		return nil, fmt.Errorf("%w: %s", ErrUnsupportedCompression, comp)
	}
	return comp.Coding().NewReader(r)
}

// errTooLarge marks output over the decompression cap.
var errTooLarge = errors.New("decompressed size over the cap")

// Decompress decodes b compressed with comp, refusing more than max
// decompressed bytes. Undecodable input and output over max match
// ErrCorrupt; a missing decoder gives ErrUnsupportedCompression.
func (c Codecs) Decompress(comp Compression, b []byte, max int64) ([]byte, error) {
	if comp == CompressionNone && c[comp] == nil {
		if int64(len(b)) > max {
			return nil, corruptf("%d bytes, over the %d-byte cap", len(b), max)
		}
		return b, nil
	}
	d, err := c.NewReader(comp, bytes.NewReader(b))
	if errors.Is(err, ErrUnsupportedCompression) {
		return nil, err
	}
	if err != nil {
		return nil, corruptf("%s: %v", comp, err)
	}
	defer d.Close()
	out, err := readCapped(d, max)
	if err != nil {
		return nil, corruptf("%s: %v", comp, err)
	}
	return out, nil
}

// readCapped reads r to EOF, failing with errTooLarge past max bytes.
func readCapped(r io.Reader, max int64) ([]byte, error) {
	var buf bytes.Buffer
	n, err := buf.ReadFrom(io.LimitReader(r, max+1))
	if err != nil {
		return nil, err
	}
	if n > max {
		return nil, errTooLarge
	}
	return buf.Bytes(), nil
}
