package segment

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
)

// Record framing limits (registry docs/registry.md §5).
const (
	// MaxCorrID is the longest corr_id a record carries, in bytes.
	MaxCorrID = 64
	// MaxArtifact is the largest artifact a record carries (the tlog-tiles
	// entry limit).
	MaxArtifact = 65535
	// MinBody and MaxBody bound the length field L of a record.
	MinBody = 9
	MaxBody = MinBody + MaxCorrID + MaxArtifact // 65,608
	// RecordOverhead is the framing in front of the body: L and the CRC.
	RecordOverhead = 8
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Record is one log entry: a version, the corr_id of the commit request that
// wrote it (≤ MaxCorrID printable ASCII bytes, may be empty) and the
// artifact's canonical bytes.
type Record struct {
	Version  uint64 `json:"version"`
	CorrID   string `json:"corr_id,omitempty"`
	Artifact []byte `json:"artifact"` // base64 in JSON (the registry's log entries)
}

// encodedLen is the number of bytes EncodeRecord appends for r.
func (r Record) encodedLen() int {
	return RecordOverhead + MinBody + len(r.CorrID) + len(r.Artifact)
}

// validate reports whether r can be framed: corr_id and artifact in bounds.
func (r Record) validate() error {
	if err := checkCorrID([]byte(r.CorrID)); err != nil {
		return fmt.Errorf("%w: version %d: %v", ErrInvalid, r.Version, err)
	}
	if len(r.Artifact) > MaxArtifact {
		return fmt.Errorf("%w: version %d: artifact of %d bytes exceeds %d", ErrInvalid, r.Version, len(r.Artifact), MaxArtifact)
	}
	return nil
}

// checkCorrID accepts 0–MaxCorrID printable ASCII bytes.
func checkCorrID(b []byte) error {
	if len(b) > MaxCorrID {
		return fmt.Errorf("corr_id of %d bytes exceeds %d", len(b), MaxCorrID)
	}
	for _, c := range b {
		if c < 0x20 || c > 0x7e {
			return fmt.Errorf("corr_id byte %#x is not printable ASCII", c)
		}
	}
	return nil
}

// EncodeRecord appends r to dst in the exact on-disk layout:
//
//	u32 BE L | u32 BE CRC-32C (Castagnoli) of the next L bytes |
//	u64 BE version | u8 C | corr_id (C bytes) | artifact (L−9−C bytes)
//
// It does not validate r; Append does. Tests use it to forge records.
func EncodeRecord(dst []byte, r Record) []byte {
	body := MinBody + len(r.CorrID) + len(r.Artifact)
	start := len(dst)
	dst = binary.BigEndian.AppendUint32(dst, uint32(body))
	dst = append(dst, 0, 0, 0, 0)
	dst = binary.BigEndian.AppendUint64(dst, r.Version)
	dst = append(dst, byte(len(r.CorrID)))
	dst = append(dst, r.CorrID...)
	dst = append(dst, r.Artifact...)
	sum := crc32.Checksum(dst[start+RecordOverhead:], castagnoli)
	binary.BigEndian.PutUint32(dst[start+4:], sum)
	return dst
}

// DecodeRecord decodes the record at the start of b and returns it with the
// number of bytes it occupies. The returned Artifact aliases b. It fails with
// a *CorruptError (check "truncated", "length", "crc" or "corr_id") unless the
// framing is complete, MinBody ≤ L ≤ MaxBody, the CRC matches and the corr_id
// is well formed; it never checks the version (the caller knows which one is
// due).
func DecodeRecord(b []byte) (Record, int, error) {
	if len(b) < RecordOverhead {
		return Record{}, 0, &CorruptError{Check: CheckTruncated}
	}
	n, sum, err := parseFrame(b[:RecordOverhead])
	if err != nil {
		return Record{}, 0, err
	}
	if len(b)-RecordOverhead < n {
		return Record{}, 0, &CorruptError{Check: CheckTruncated}
	}
	rec, err := decodeBody(b[RecordOverhead:RecordOverhead+n], sum)
	return rec, RecordOverhead + n, err
}

// parseFrame reads L and the CRC from the 8-byte frame and bounds L.
func parseFrame(h []byte) (n int, sum uint32, err error) {
	l := binary.BigEndian.Uint32(h)
	if l < MinBody || l > MaxBody {
		return 0, 0, &CorruptError{Check: CheckLength, Detail: fmt.Sprintf("L=%d outside %d–%d", l, MinBody, MaxBody)}
	}
	return int(l), binary.BigEndian.Uint32(h[4:]), nil
}

// decodeBody checks the CRC of body and splits it into a Record aliasing it.
func decodeBody(body []byte, sum uint32) (Record, error) {
	if got := crc32.Checksum(body, castagnoli); got != sum {
		return Record{}, &CorruptError{Check: CheckCRC, Detail: fmt.Sprintf("crc %08x, stored %08x", got, sum)}
	}
	c := int(body[8])
	if c > MaxCorrID || MinBody+c > len(body) {
		return Record{}, &CorruptError{Check: CheckCorrID, Detail: fmt.Sprintf("corr_id length %d", c)}
	}
	corr := body[MinBody : MinBody+c]
	if err := checkCorrID(corr); err != nil {
		return Record{}, &CorruptError{Check: CheckCorrID, Detail: err.Error()}
	}
	art := body[MinBody+c:]
	if len(art) > MaxArtifact {
		return Record{}, &CorruptError{Check: CheckLength, Detail: fmt.Sprintf("artifact of %d bytes", len(art))}
	}
	return Record{Version: binary.BigEndian.Uint64(body), CorrID: string(corr), Artifact: art}, nil
}
