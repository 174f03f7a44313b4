package tiles

import (
	"errors"
	"math"
	"testing"
)

func TestParseTilePathValid(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want TilePath
	}{
		{"0/000", TilePath{}},
		{"0/005", TilePath{Index: 5}},
		{"0/x001/x234/067", TilePath{Index: 1234067}},
		{"1/005.p/7", TilePath{Level: 1, Index: 5, Width: 7}},
		{"63/999.p/255", TilePath{Level: 63, Index: 999, Width: 255}},
		{"2/x001/000", TilePath{Level: 2, Index: 1000}},
		{"0/x001/x000/000.p/1", TilePath{Index: 1000000, Width: 1}},
		{"entries/000", TilePath{Entries: true}},
		{"entries/x002/255.p/128", TilePath{Entries: true, Index: 2255, Width: 128}},
		{"0/x018/x446/x744/x073/x709/x551/615", TilePath{Index: math.MaxUint64}},
	} {
		got, err := ParseTilePath(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseTilePath(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
			continue
		}
		if s := got.String(); s != tc.in {
			t.Errorf("String(%+v) = %q, want %q", got, s, tc.in)
		}
	}
}

func TestParseTilePathMalformed(t *testing.T) {
	for _, in := range []string{
		"", "0", "0/", "/000", "entries", "entries/", "tile/0/000", "0/000/",
		"00/000", "01/000", "64/000", "100/000", "-1/000", "+1/000", "a/000", "0x1/000",
		"0/5", "0/05", "0/0005", "0/00a", "0/ 05", "0/-05",
		"0/001/234", "0/x001", "0/x001/x234", "0/x001/234/x067", "0/x000/005", "0/x000/x001/005",
		"0/xx01/005", "0/X001/005",
		"0/005.p/0", "0/005.p/00", "0/005.p/07", "0/005.p/256", "0/005.p/1000", "0/005.p/", "0/005.p",
		"0/005.p/-1", "0/005.p/+7", "0/005.p/7/", "0/005.p/7.p/7", "0/x001.p/5/234", "0/005.P/7", "0/005p/7",
		"0/005.q/7", "0/005/.p/7", "0/.p/7",
		"entries/005.p/256", "entries/x000/005", "entries/5",
		"0/x018/x446/x744/x073/x709/x551/616", "0/x999/x999/x999/x999/x999/x999/999",
		"0/x001/x000/x000/x000/x000/x000/x000/000",
		"0/005\n", " 0/005", "0//005", "0/005/",
	} {
		if got, err := ParseTilePath(in); !errors.Is(err, ErrBadPath) {
			t.Errorf("ParseTilePath(%q) = %+v, %v; want ErrBadPath", in, got, err)
		}
	}
}

func TestTilePathString(t *testing.T) {
	for _, tc := range []struct {
		p    TilePath
		want string
	}{
		{TilePath{Index: 0}, "0/000"},
		{TilePath{Index: 999}, "0/999"},
		{TilePath{Index: 1000}, "0/x001/000"},
		{TilePath{Level: 3, Index: 1234067, Width: 9}, "3/x001/x234/067.p/9"},
		{TilePath{Entries: true, Index: 7}, "entries/007"},
	} {
		if got := tc.p.String(); got != tc.want {
			t.Errorf("%+v.String() = %q, want %q", tc.p, got, tc.want)
		}
	}
}

func TestTilePathValid(t *testing.T) {
	for _, tc := range []struct {
		p    TilePath
		want bool
	}{
		{TilePath{}, true},
		{TilePath{Level: 63, Width: 255}, true},
		{TilePath{Level: 64}, false},
		{TilePath{Width: 256}, false},
		{TilePath{Width: -1}, false},
		{TilePath{Entries: true, Level: 1}, false},
	} {
		if got := tc.p.Valid(); got != tc.want {
			t.Errorf("%+v.Valid() = %v, want %v", tc.p, got, tc.want)
		}
	}
}

func TestTilePathCoveredAndEnd(t *testing.T) {
	for _, tc := range []struct {
		p    TilePath
		size uint64
		want bool
	}{
		{TilePath{Width: 1}, 0, false},
		{TilePath{Width: 1}, 1, true},
		{TilePath{Width: 2}, 1, false},
		{TilePath{}, 255, false},
		{TilePath{}, 256, true},
		{TilePath{Width: 255}, 256, true},
		{TilePath{Index: 1, Width: 1}, 256, false},
		{TilePath{Index: 1, Width: 1}, 257, true},
		{TilePath{Level: 1, Width: 1}, 255, false},
		{TilePath{Level: 1, Width: 1}, 256, true},
		{TilePath{Level: 1}, 65535, false},
		{TilePath{Level: 1}, 65536, true},
		{TilePath{Level: 1, Width: 255}, 65535, true},
		{TilePath{Level: 2, Width: 1}, 65535, false},
		{TilePath{Level: 2, Width: 1}, 65536, true},
		{TilePath{Level: 8, Width: 1}, math.MaxUint64, false},
		{TilePath{Level: 7, Width: 255}, math.MaxUint64, true},
		{TilePath{Level: 7}, math.MaxUint64, false},
		{TilePath{Index: math.MaxUint64, Width: 1}, math.MaxUint64, false},
		{TilePath{Entries: true, Index: 1, Width: 44}, 300, true},
		{TilePath{Entries: true, Index: 1, Width: 45}, 300, false},
		{TilePath{Entries: true, Index: 1}, 512, true},
		{TilePath{Width: 300}, 1000, false},
	} {
		if got := tc.p.Covered(tc.size); got != tc.want {
			t.Errorf("%+v.Covered(%d) = %v, want %v", tc.p, tc.size, got, tc.want)
		}
	}
	for p, want := range map[TilePath]uint64{
		{}:                                      256,
		{Index: 2, Width: 5}:                    517,
		{Entries: true, Index: 1}:               512,
		{Index: math.MaxUint64}:                 math.MaxUint64,
		{Index: math.MaxUint64 / 256, Width: 1}: math.MaxUint64,
	} {
		if got := p.End(); got != want {
			t.Errorf("%+v.End() = %d, want %d", p, got, want)
		}
	}
}

func FuzzParseTilePath(f *testing.F) {
	for _, s := range []string{"0/000", "0/x001/x234/067", "1/005.p/7", "entries/000", "entries/x002/255.p/128",
		"63/999.p/255", "64/000", "0/x000/005", "0/005.p/256", "0/x018/x446/x744/x073/x709/x551/615", "0/05"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParseTilePath(s)
		if err != nil {
			if !errors.Is(err, ErrBadPath) {
				t.Fatalf("ParseTilePath(%q): %v does not wrap ErrBadPath", s, err)
			}
			return
		}
		if !p.Valid() {
			t.Fatalf("ParseTilePath(%q) = invalid %+v", s, p)
		}
		if got := p.String(); got != s {
			t.Fatalf("String(ParseTilePath(%q)) = %q", s, got)
		}
	})
}

func FuzzTilePathString(f *testing.F) {
	f.Add(uint8(0), uint64(0), 0, false)
	f.Add(uint8(3), uint64(1234067), 9, false)
	f.Add(uint8(0), uint64(math.MaxUint64), 255, true)
	f.Add(uint8(64), uint64(1), 256, false)
	f.Add(uint8(1), uint64(100), 243, true)
	f.Fuzz(func(t *testing.T, level uint8, index uint64, width int, entries bool) {
		p := TilePath{Level: level, Index: index, Width: width, Entries: entries}
		got, err := ParseTilePath(p.String())
		if p.Valid() && (err != nil || got != p) {
			t.Fatalf("ParseTilePath(%q) = %+v, %v; want %+v", p.String(), got, err, p)
		}
		if !p.Valid() && err == nil && got == p {
			t.Fatalf("invalid %+v round-trips through %q", p, p.String())
		}
	})
}
