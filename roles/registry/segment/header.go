package segment

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
)

// Segment header: magic + first version.
const (
	magic      = "RONRSEG1"
	HeaderSize = 16
	namePrefix = "seg-"
	nameSuffix = ".log"
	nameDigits = 20
)

// SegmentName is the file name of the segment whose first version is first.
func SegmentName(first uint64) string {
	return fmt.Sprintf("%s%0*d%s", namePrefix, nameDigits, first, nameSuffix)
}

// parseName returns the first version encoded in a segment file name.
func parseName(name string) (uint64, bool) {
	digits, ok := strings.CutPrefix(name, namePrefix)
	if !ok {
		return 0, false
	}
	digits, ok = strings.CutSuffix(digits, nameSuffix)
	if !ok || len(digits) != nameDigits {
		return 0, false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	v, err := strconv.ParseUint(digits, 10, 64)
	return v, err == nil
}

// appendHeader appends the 16-byte header of the segment starting at first.
func appendHeader(dst []byte, first uint64) []byte {
	dst = append(dst, magic...)
	return binary.BigEndian.AppendUint64(dst, first)
}

// checkHeader validates a segment header read from the file named name.
func checkHeader(h []byte, name string, first uint64) *CorruptError {
	bad := &CorruptError{Segment: name, Version: first, Check: CheckHeader}
	switch {
	case len(h) < HeaderSize:
		bad.Detail = fmt.Sprintf("%d of %d header bytes", len(h), HeaderSize)
	case string(h[:8]) != magic:
		bad.Detail = fmt.Sprintf("magic %q", h[:8])
	case binary.BigEndian.Uint64(h[8:]) != first:
		bad.Detail = fmt.Sprintf("first version %d, file name says %d", binary.BigEndian.Uint64(h[8:]), first)
	default:
		return nil
	}
	return bad
}
