package bao

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

// lyingObject is 5 whole groups and a partial one.
const lyingSize = 5*GroupSize + 1234

// lyingObject returns the object's bytes, outboard and id.
func lyingObject(t *testing.T) ([]byte, Outboard, ID) {
	in := baoInput(lyingSize)
	ob, id, err := Encode(bytes.NewReader(in), lyingSize)
	if err != nil {
		t.Fatal(err)
	}
	return in, ob, id
}

// source is one answer a lying (or honest) source gives for the object:
// its bytes and its outboard.
type source struct {
	name     string
	data     []byte
	outboard []byte
	// good is how many leading bytes of data are the object's own and may
	// reach the destination before the lie is found; -1: all (an honest
	// source).
	good int64
}

// lyingSources returns honest and lying answers for the object in, whose
// outboard is ob.
func lyingSources(t *testing.T, in []byte, ob Outboard) []source {
	fake := bytes.Clone(in)
	fake[10] ^= 0xff
	fakeOB, _, err := Encode(bytes.NewReader(fake), int64(len(fake)))
	if err != nil {
		t.Fatal(err)
	}
	other := baoInput(len(in) + 4)[4:]
	otherOB, _, err := Encode(bytes.NewReader(other), int64(len(other)))
	if err != nil {
		t.Fatal(err)
	}
	flipped := func(group int64) []byte {
		b := bytes.Clone(in)
		b[min(group*GroupSize+GroupSize/2, int64(len(b))-1)] ^= 1
		return b
	}
	badParent := bytes.Clone(ob)
	badParent[len(badParent)-1] ^= 1 // the last parent: the one above the last groups
	last := int64(len(in)-1) / GroupSize
	return []source{
		{"honest", in, ob, -1},
		{"fake bytes with their own outboard", fake, fakeOB, 0},
		{"the outboard of another object", in, otherOB, 0},
		{"fake bytes, the real outboard", fake, ob, 0},
		{"one flipped byte in the first group", flipped(0), ob, 0},
		{"one flipped byte in a middle group", flipped(2), ob, 2 * GroupSize},
		{"one flipped byte in the last group", flipped(last), ob, last * GroupSize},
		{"one flipped bit in a parent", in, badParent, 4 * GroupSize},
	}
}

// TestVerifyLyingSources: a whole read writes the object when the source is
// honest; otherwise it fails, and every byte it wrote is the object's own —
// exactly the groups before the lie.
func TestVerifyLyingSources(t *testing.T) {
	in, ob, id := lyingObject(t)
	for _, s := range lyingSources(t, in, ob) {
		t.Run(s.name, func(t *testing.T) {
			var out bytes.Buffer
			err := Verify(&out, bytes.NewReader(s.data), Outboard(s.outboard), id)
			if s.good < 0 {
				if err != nil || !bytes.Equal(out.Bytes(), in) {
					t.Fatalf("honest source: %v, %d bytes", err, out.Len())
				}
				return
			}
			if !errors.Is(err, ErrMismatch) {
				t.Fatalf("err %v, want ErrMismatch", err)
			}
			if int64(out.Len()) != s.good || !bytes.Equal(out.Bytes(), in[:s.good]) {
				t.Fatalf("wrote %d bytes, want the object's first %d", out.Len(), s.good)
			}
		})
	}
}

// TestVerifyStreamShapes: a short stream, a longer one, a truncated and an
// inconsistent outboard.
func TestVerifyStreamShapes(t *testing.T) {
	in, ob, id := lyingObject(t)
	var out bytes.Buffer
	if err := Verify(&out, bytes.NewReader(in[:3*GroupSize+5]), ob, id); !errors.Is(err, io.ErrUnexpectedEOF) || out.Len() != 3*GroupSize {
		t.Fatalf("short stream: %v, %d bytes", err, out.Len())
	}
	out.Reset()
	if err := Verify(&out, bytes.NewReader(append(bytes.Clone(in), 'x')), ob, id); err == nil {
		t.Fatal("a stream longer than the object verified")
	}
	for _, c := range []struct {
		name string
		b    []byte
		size int64
	}{
		{"truncated", ob[:len(ob)-1], lyingSize},
		{"one parent more", append(bytes.Clone(ob), make([]byte, 64)...), lyingSize},
		{"header states another size", ob, lyingSize - 1},
		{"header only", ob[:8], lyingSize},
		{"empty", nil, 0},
		{"negative size", ob, -1},
	} {
		if _, err := ParseOutboard(c.b, c.size); !errors.Is(err, ErrBadOutboard) {
			t.Errorf("%s: %v, want ErrBadOutboard", c.name, err)
		}
	}
	if got, err := ParseOutboard(ob, lyingSize); err != nil || got.Size() != lyingSize {
		t.Fatalf("the real outboard: %v", err)
	}
}

// ranges start and end on and off group boundaries.
var ranges = [][2]int64{
	{0, 1}, {0, GroupSize}, {GroupSize, GroupSize}, {GroupSize - 1, 2}, {1, 3 * GroupSize},
	{2*GroupSize + 17, GroupSize + 100}, {lyingSize - 1, 1}, {0, lyingSize}, {4 * GroupSize, lyingSize - 4*GroupSize},
}

// slicesOf returns the slice a source built from s would send for r.
func sliceOf(t *testing.T, s source, r [2]int64) []byte {
	from, to, err := Span(r[0], r[1], lyingSize)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := ExtractSlice(&b, bytes.NewReader(s.data[from:to]), Outboard(s.outboard), r[0], r[1]); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestVerifySliceLyingSources: for every range, a slice from an honest
// source yields exactly the range; from a lying source whose lie falls in
// the range's groups it fails, and every byte written is the range's own.
func TestVerifySliceLyingSources(t *testing.T) {
	in, ob, id := lyingObject(t)
	for _, s := range lyingSources(t, in, ob) {
		for _, r := range ranges {
			want := in[r[0] : r[0]+r[1]]
			var out bytes.Buffer
			err := VerifySlice(&out, bytes.NewReader(sliceOf(t, s, r)), id, r[0], r[1])
			if !bytes.HasPrefix(want, out.Bytes()) {
				t.Fatalf("%s, range %v: wrote bytes that are not the range's", s.name, r)
			}
			if err == nil && !bytes.Equal(out.Bytes(), want) {
				t.Fatalf("%s, range %v: verified but wrote %d of %d bytes", s.name, r, out.Len(), len(want))
			}
			if s.good < 0 && err != nil {
				t.Fatalf("honest source, range %v: %v", r, err)
			}
		}
	}
}

// TestVerifySliceWrongRange: a slice of one range never verifies as
// another, and a slice that states a shorter object fails before any byte.
func TestVerifySliceWrongRange(t *testing.T) {
	in, ob, id := lyingObject(t)
	honest := source{data: in, outboard: ob}
	slice := sliceOf(t, honest, [2]int64{GroupSize, GroupSize})
	for _, r := range [][2]int64{{0, GroupSize}, {2 * GroupSize, GroupSize}, {GroupSize, GroupSize + 1}, {GroupSize + 1, GroupSize}} {
		var out bytes.Buffer
		err := VerifySlice(&out, bytes.NewReader(slice), id, r[0], r[1])
		if err == nil && !bytes.Equal(out.Bytes(), in[r[0]:r[0]+r[1]]) {
			t.Fatalf("range %v: verified the wrong bytes", r)
		}
		if err == nil {
			t.Fatalf("range %v: the slice of another range verified", r)
		}
	}
	var out bytes.Buffer
	short := sliceOf(t, honest, [2]int64{0, 1})
	if err := VerifySlice(&out, bytes.NewReader(short), id, lyingSize, 1); !errors.Is(err, ErrMismatch) || out.Len() != 0 {
		t.Fatalf("a range past the stated size: %v, %d bytes", err, out.Len())
	}
	if err := VerifySlice(&out, bytes.NewReader(short[:5]), id, 0, 1); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("truncated header: %v", err)
	}
	if err := VerifySlice(&out, bytes.NewReader(short), ID{}, 0, 1); !errors.Is(err, ErrMismatch) {
		t.Fatalf("another id: %v", err)
	}
}

// TestVerifyGroupLyingSources checks every group on its own, in reverse
// order (a reader may verify any group first): an honest source's groups
// all verify; a lying one's group fails exactly when it is not the object's
// own or its proof path is wrong.
func TestVerifyGroupLyingSources(t *testing.T) {
	in, ob, id := lyingObject(t)
	groups := (int64(len(in)) + GroupSize - 1) / GroupSize
	for _, s := range lyingSources(t, in, ob) {
		t.Run(s.name, func(t *testing.T) {
			sob, err := ParseOutboard(s.outboard, int64(len(s.data)))
			if err != nil {
				t.Fatal(err)
			}
			for g := groups - 1; g >= 0; g-- {
				from, to := g*GroupSize, min((g+1)*GroupSize, int64(len(s.data)))
				err := VerifyGroup(s.data[from:to], sob, id, g)
				own := bytes.Equal(s.data[from:to], in[from:to]) && bytes.Equal(s.outboard, ob)
				var me *MismatchError
				switch {
				case own && err != nil:
					t.Errorf("group %d is the object's own, with its outboard: %v", g, err)
				case !own && s.good >= 0 && from >= s.good && (!errors.As(err, &me) || me.Group != g):
					t.Errorf("group %d at or past the lie: %v, want a mismatch in group %d", g, err, g)
				}
			}
		})
	}
}

// TestVerifyGroupShapes: the wrong length, a wrong id, a group outside the
// object and the one-group object.
func TestVerifyGroupShapes(t *testing.T) {
	in, ob, id := lyingObject(t)
	last := int64(len(in)-1) / GroupSize
	lastGroup := in[last*GroupSize:]
	small := in[:1000]
	smallOB, smallID, err := Encode(bytes.NewReader(small), int64(len(small)))
	if err != nil {
		t.Fatal(err)
	}
	empty, emptyID, err := Encode(bytes.NewReader(nil), 0)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		group []byte
		ob    Outboard
		id    ID
		g     int64
		want  error
	}{
		{"the last group", lastGroup, ob, id, last, nil},
		{"the last group with a byte more", append(bytes.Clone(lastGroup), 0), ob, id, last, ErrMismatch},
		{"the last group a byte short", lastGroup[:len(lastGroup)-1], ob, id, last, ErrMismatch},
		{"a whole group a byte short", in[:GroupSize-1], ob, id, 0, ErrMismatch},
		{"group 0 at the place of group 1", in[:GroupSize], ob, id, 1, ErrMismatch},
		{"another id", in[:GroupSize], ob, smallID, 0, ErrMismatch},
		{"a group past the end", lastGroup, ob, id, last + 1, ErrBadRange},
		{"a negative group", in[:GroupSize], ob, id, -1, ErrBadRange},
		{"the one group of a small object", small, smallOB, smallID, 0, nil},
		{"the small object, one byte flipped", append([]byte{small[0] ^ 1}, small[1:]...), smallOB, smallID, 0, ErrMismatch},
		{"the empty object has no group", nil, empty, emptyID, 0, ErrBadRange},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := VerifyGroup(c.group, c.ob, c.id, c.g)
			if c.want == nil && err != nil || c.want != nil && !errors.Is(err, c.want) {
				t.Fatalf("VerifyGroup: %v, want %v", err, c.want)
			}
		})
	}
}
