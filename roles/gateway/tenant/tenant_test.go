package tenant

import (
	"net/netip"
	"strings"
	"testing"
)

func splitTrim(s string) []string {
	parts := strings.Split(s, ",")
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	return parts
}

func TestAnon(t *testing.T) {
	cases := []struct {
		ip   netip.Addr
		want string
	}{
		{netip.MustParseAddr("203.0.113.77"), "anon:203.0.113.0/24"},
		{netip.MustParseAddr("::ffff:203.0.113.77"), "anon:203.0.113.0/24"},
		{netip.MustParseAddr("2001:db8:1:2:3:4:5:6"), "anon:2001:db8:1:2::/64"},
		{netip.MustParseAddr("fe80::1%eth0"), "anon:fe80::/64"},
		{netip.MustParseAddr("::1"), "anon:::/64"},
		{netip.Addr{}, "anon:unknown"},
	}
	for _, c := range cases {
		if got := Anon(c.ip); got != c.want {
			t.Errorf("Anon(%v) = %q, want %q", c.ip, got, c.want)
		}
		if c.ip.IsValid() && !ID(Anon(c.ip)).Anonymous() {
			t.Errorf("Anon(%v) not anonymous", c.ip)
		}
	}
}

func TestValidTokenTenant(t *testing.T) {
	cases := []struct {
		id string
		ok bool
	}{
		{"acme", true},
		{"Acme.corp:team#1/x@y-z_", true},
		{"Acme.corp:team#1/x@y-z", true},
		{"", false},
		{".acme", false},
		{"-acme", false},
		{"anon:203.0.113.0/24", false},
		{"anonymous", true},
		{"a b", false},
		{"é", false},
		{strings.Repeat("a", 128), true},
		{strings.Repeat("a", 129), false},
	}
	for _, c := range cases {
		if got := ValidTokenTenant(c.id); got != c.ok {
			t.Errorf("ValidTokenTenant(%q) = %v, want %v", c.id, got, c.ok)
		}
	}
}
