package netcfg

import (
	"net/netip"
	"slices"
	"testing"
)

func TestPrefixes(t *testing.T) {
	got, err := Prefixes([]string{"10.1.2.3/8", "192.0.2.7", "::ffff:192.0.2.8", "2001:db8::1/32", "fe80::1%eth0", "0.0.0.0/0"})
	want := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("192.0.2.7/32"),
		netip.MustParsePrefix("192.0.2.8/32"), netip.MustParsePrefix("2001:db8::/32"),
		netip.MustParsePrefix("fe80::1/128"), netip.MustParsePrefix("0.0.0.0/0")}
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("%v %v", got, err)
	}
	if got, err := Prefixes(nil); err != nil || len(got) != 0 {
		t.Fatalf("empty: %v %v", got, err)
	}
}

func TestPrefixesBadInput(t *testing.T) {
	for _, s := range []string{"", "10.0.0.0/33", "10.0.0", "localhost", "10.0.0.1/", "/8", "2001:db8::/129",
		"10.0.0.1 ", " 10.0.0.1", "10.0.0.0/8,10.1.0.0/16"} {
		_, err := Prefixes([]string{"192.0.2.1", s})
		if err == nil || err.Error() != `"`+s+`" is not a CIDR or an address` {
			t.Errorf("Prefixes(%q) = %v", s, err)
		}
	}
}

// FuzzPrefixes: an entry either fails or yields one masked prefix that
// contains the address written.
func FuzzPrefixes(f *testing.F) {
	for _, s := range []string{"10.0.0.0/8", "192.0.2.1", "::ffff:1.2.3.4", "2001:db8::/32", "x", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := Prefixes([]string{s})
		if err != nil {
			return
		}
		if len(got) != 1 || got[0] != got[0].Masked() || !got[0].IsValid() {
			t.Fatalf("Prefixes(%q) = %v", s, got)
		}
	})
}
