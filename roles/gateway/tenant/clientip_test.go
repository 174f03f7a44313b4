package tenant

import (
	"net/netip"
	"testing"
)

func prefixes(t testing.TB, ss ...string) []netip.Prefix {
	t.Helper()
	out := make([]netip.Prefix, 0, len(ss))
	for _, s := range ss {
		out = append(out, netip.MustParsePrefix(s))
	}
	return out
}

func TestClientIP(t *testing.T) {
	trusted := prefixes(t, "10.0.0.0/8", "fd00::/8", "::ffff:192.168.0.0/112")
	cases := []struct {
		name, peer string
		xff        []string
		want       string
	}{
		{"untrusted peer ignores xff", "198.51.100.7", []string{"203.0.113.9"}, "198.51.100.7"},
		{"untrusted mapped peer as v4", "::ffff:198.51.100.7", nil, "198.51.100.7"},
		{"trusted peer no xff", "10.0.0.1", nil, "10.0.0.1"},
		{"trusted peer blank xff", "10.0.0.1", []string{" "}, "10.0.0.1"},
		{"single client", "10.0.0.1", []string{"203.0.113.9"}, "203.0.113.9"},
		{"rightmost untrusted wins", "10.0.0.1", []string{"1.1.1.1, 203.0.113.9, 10.2.3.4"}, "203.0.113.9"},
		{"lines joined in order", "10.0.0.1", []string{"1.1.1.1, 2.2.2.2", "10.9.9.9"}, "2.2.2.2"},
		{"all trusted leftmost", "10.0.0.1", []string{"10.1.1.1, 10.2.2.2", "10.3.3.3"}, "10.1.1.1"},
		{"unparsable stops walk", "10.0.0.1", []string{"203.0.113.9, junk, 10.2.2.2"}, "10.2.2.2"},
		{"unparsable rightmost gives peer", "10.0.0.1", []string{"203.0.113.9, junk"}, "10.0.0.1"},
		{"empty element stops walk", "10.0.0.1", []string{"203.0.113.9,,10.5.5.5"}, "10.5.5.5"},
		{"port is unparsable", "10.0.0.1", []string{"203.0.113.9:443"}, "10.0.0.1"},
		{"ipv6 client", "fd00::1", []string{"2001:db8:1:2::5, fd00::7"}, "2001:db8:1:2::5"},
		{"mapped client as v4", "10.0.0.1", []string{"::ffff:203.0.113.9"}, "203.0.113.9"},
		{"mapped trusted hop skipped", "10.0.0.1", []string{"203.0.113.9, ::ffff:10.1.1.1"}, "203.0.113.9"},
		{"mapped trusted prefix matches v4 peer", "192.168.1.1", []string{"203.0.113.9"}, "203.0.113.9"},
		{"zone dropped", "fd00::1", []string{"fe80::1%eth0"}, "fe80::1"},
		{"v4 trusted peer mapped", "::ffff:10.0.0.1", []string{"203.0.113.9"}, "203.0.113.9"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := ClientIP(netip.MustParseAddr(c.peer), c.xff, trusted)
			if got != netip.MustParseAddr(c.want) {
				t.Fatalf("ClientIP(%s, %q) = %s, want %s", c.peer, c.xff, got, c.want)
			}
		})
	}
}

func TestClientIPNoTrusted(t *testing.T) {
	peer := netip.MustParseAddr("10.0.0.1")
	if got := ClientIP(peer, []string{"203.0.113.9"}, nil); got != peer {
		t.Fatalf("got %s, want peer", got)
	}
	if got := ClientIP(netip.Addr{}, []string{"203.0.113.9"}, prefixes(t, "0.0.0.0/0")); got.IsValid() {
		t.Fatalf("invalid peer gave %s", got)
	}
}

func FuzzClientIP(f *testing.F) {
	f.Add("203.0.113.9, 10.0.0.2", "::ffff:10.1.1.1")
	f.Add("junk,,", "fd00::1%x, 2001:db8::1")
	f.Add("", " ")
	trusted := prefixes(f, "10.0.0.0/8", "fd00::/8")
	peer := netip.MustParseAddr("10.0.0.1")
	f.Fuzz(func(t *testing.T, a, b string) {
		got := ClientIP(peer, []string{a, b}, trusted)
		if !got.IsValid() || got.Is4In6() || got.Zone() != "" {
			t.Fatalf("ClientIP gave %v", got)
		}
		if got != peer && !inputHas(got, a+","+b) {
			t.Fatalf("ClientIP gave %s, not in input", got)
		}
		if !isTrusted(got, trusted) && !trustedAfter(got, a+","+b, trusted) {
			t.Fatalf("ClientIP gave %s with an untrusted or bad element to its right", got)
		}
		outside := netip.MustParseAddr("198.51.100.1")
		if ClientIP(outside, []string{a, b}, trusted) != outside {
			t.Fatalf("untrusted peer not returned")
		}
	})
}

// inputHas reports whether some comma-separated element of s parses to a.
func inputHas(a netip.Addr, s string) bool {
	for _, e := range splitTrim(s) {
		if p, err := netip.ParseAddr(e); err == nil && canon(p) == a {
			return true
		}
	}
	return false
}

// trustedAfter reports whether every element right of a's last occurrence in
// s parses to a trusted address.
func trustedAfter(a netip.Addr, s string, trusted []netip.Prefix) bool {
	elems := splitTrim(s)
	last := -1
	for i, e := range elems {
		if p, err := netip.ParseAddr(e); err == nil && canon(p) == a {
			last = i
		}
	}
	for _, e := range elems[last+1:] {
		p, err := netip.ParseAddr(e)
		if err != nil || !isTrusted(canon(p), trusted) {
			return false
		}
	}
	return last >= 0
}
