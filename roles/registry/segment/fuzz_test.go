package segment

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"testing"
)

func FuzzReadRecord(f *testing.F) {
	valid := EncodeRecord(nil, record(42))
	f.Add(valid)
	f.Add(valid[:len(valid)-1])
	f.Add(append(EncodeRecord(nil, Record{Version: 1}), 0, 1, 2))
	f.Add([]byte{})
	f.Add(make([]byte, 17))
	bad := bytes.Clone(valid)
	bad[5] ^= 1
	f.Add(bad)
	f.Fuzz(func(t *testing.T, b []byte) {
		rec, n, err := DecodeRecord(b)
		if err != nil {
			return
		}
		l := binary.BigEndian.Uint32(b)
		if n != RecordOverhead+int(l) || l < MinBody || l > MaxBody {
			t.Fatalf("accepted L=%d using %d bytes", l, n)
		}
		if crc32.Checksum(b[RecordOverhead:n], castagnoli) != binary.BigEndian.Uint32(b[4:]) {
			t.Fatal("accepted a bad CRC")
		}
		if !bytes.Equal(EncodeRecord(nil, rec), b[:n]) {
			t.Fatal("re-encoding differs")
		}
	})
}

func FuzzOpen(f *testing.F) {
	two := EncodeRecord(EncodeRecord(nil, record(0)), record(1))
	f.Add([]byte{}, false)
	f.Add(EncodeRecord(nil, record(2)), false)
	f.Add(EncodeRecord(nil, record(3)), false)
	f.Add(append(appendHeader(nil, 0), two...), true)
	f.Add([]byte("RONRSEG1\x00\x00"), true)
	f.Fuzz(func(t *testing.T, data []byte, raw bool) {
		fsys := NewMemFS()
		if err := fsys.MkdirAll("/log"); err != nil {
			t.Fatal(err)
		}
		seg := data
		head := int64(-1)
		if !raw {
			seg = append(append(appendHeader(nil, 0), two...), data...)
			head = 1
		}
		if err := fsys.WriteFile(segPath("/log", 0), seg); err != nil {
			t.Fatal(err)
		}
		l, _, err := Open("/log", opts(fsys, head))
		if err != nil {
			if !raw {
				t.Fatalf("a tail above two good records must be cut: %v", err)
			}
			return
		}
		defer l.Close()
		n := l.Next()
		if !raw && n < 2 {
			t.Fatalf("lost acknowledged records: next %d", n)
		}
		for v := range n {
			if _, err := l.Read(v); err != nil {
				t.Fatalf("Read(%d) after recovery: %v", v, err)
			}
		}
		if err := l.Append(records(n, 2)); err != nil {
			t.Fatalf("Append after recovery: %v", err)
		}
	})
}
