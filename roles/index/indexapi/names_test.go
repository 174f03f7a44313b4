package indexapi

import (
	"errors"
	"strconv"
	"strings"
	"testing"
)

func TestParseNameValid(t *testing.T) {
	for _, s := range []string{
		"a", "blog.example", "xn--bcher-kva.example", "a-b.c-d", "0.9",
		strings.Repeat("a", 63), strings.Repeat("a.", 126) + "a", // 253
	} {
		if got, err := ParseName(s); err != nil || got != s {
			t.Errorf("ParseName(%q) = %q, %v", s, got, err)
		}
	}
}

func TestParseNameMalformed(t *testing.T) {
	for _, s := range []string{
		"", "Blog.example", "blog_example", "-blog.x", "blog-.x", "a..b", ".a", "a.",
		"bücher.example", "a b", "a\x00b", ".", "a/b", "a@1",
		strings.Repeat("a", 64), strings.Repeat("a.", 127), // 254
		strings.Repeat("a.", 126) + "ab",
	} {
		if _, err := ParseName(s); !errors.Is(err, ErrInvalid) {
			t.Errorf("ParseName(%q) err = %v, want ErrInvalid", s, err)
		}
	}
}

func TestParseNameVersion(t *testing.T) {
	if n, v, err := ParseNameVersion("blog.example@7"); err != nil || n != "blog.example" || v != 7 {
		t.Errorf("got %q %d %v", n, v, err)
	}
	for _, s := range []string{"a@0", "a@01", "a@-1", "a@abc", "a@", "a", "A@1", "a@1@2", "a@+1",
		"a@18446744073709551616", "a@123456789012345678901"} {
		if _, _, err := ParseNameVersion(s); !errors.Is(err, ErrInvalid) {
			t.Errorf("ParseNameVersion(%q) err = %v, want ErrInvalid", s, err)
		}
	}
}

// FuzzParseName checks ParseName against a straightforward reference.
func FuzzParseName(f *testing.F) {
	for _, s := range []string{"blog.example", "a..b", "-a", "A", "bücher", strings.Repeat("a", 64), "a@1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseName(s)
		want := refValidName(s)
		if (err == nil) != want {
			t.Fatalf("ParseName(%q) err = %v, reference valid = %v", s, err, want)
		}
		if err == nil && got != s {
			t.Fatalf("ParseName(%q) = %q", s, got)
		}
		if err != nil && !errors.Is(err, ErrInvalid) {
			t.Fatalf("error %v does not wrap ErrInvalid", err)
		}
		if name, _, err := ParseNameVersion(s); err == nil {
			if _, err := ParseName(name); err != nil {
				t.Fatalf("ParseNameVersion accepted bad name %q", name)
			}
		}
	})
}

// FuzzParseNameVersion: ParseNameVersion accepts exactly "name@version"
// with a valid name and a canonical positive decimal, and the pair it
// returns prints back to the input. (FuzzParseName covers ParseName.)
func FuzzParseNameVersion(f *testing.F) {
	for _, s := range []string{"blog.example@7", "a@0", "a@01", "a@-1", "a@", "a@1@2", "A@1", "a@18446744073709551615",
		"a@18446744073709551616", "a@+1", "@1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		name, v, err := ParseNameVersion(s)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("%q: error %v does not wrap ErrInvalid", s, err)
			}
			return
		}
		if v == 0 || !refValidName(name) {
			t.Fatalf("%q: accepted name %q version %d", s, name, v)
		}
		if back := name + "@" + strconv.FormatUint(v, 10); back != s {
			t.Fatalf("%q: round trip %q", s, back)
		}
	})
}

// refValidName is the docs/index.md §3 rule written differently from ParseName.
func refValidName(s string) bool {
	if len(s) < 1 || len(s) > 253 {
		return false
	}
	labels := strings.Split(s, ".")
	for _, l := range labels {
		if len(l) < 1 || len(l) > 63 || strings.HasPrefix(l, "-") || strings.HasSuffix(l, "-") {
			return false
		}
		if strings.Trim(l, "abcdefghijklmnopqrstuvwxyz0123456789-") != "" {
			return false
		}
	}
	return true
}
