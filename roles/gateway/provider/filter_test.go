package provider

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/ronhq/ron/httpx/client"
)

func TestFilterTable(t *testing.T) {
	f, _ := newFetcher(t, Options{MaxProviders: 10})
	for _, tc := range []struct {
		in   string
		want string // "" = dropped
	}{
		{"http://10.0.0.2:5303", "http://10.0.0.2:5303"},
		{"https://store.example.com", "https://store.example.com"},
		{"HTTP://Store.Example.COM:8080/", "http://store.example.com:8080"},
		{"http://host.example/base/path//", "http://host.example/base/path"},
		{"http://127.0.0.1:5303", "http://127.0.0.1:5303"},
		{"http://[2001:db8::1]:5303", "http://[2001:db8::1]:5303"},
		{"http://localhost:5303", "http://localhost:5303"},
		// Schemes.
		{"ftp://10.0.0.2", ""},
		{"file:///etc/passwd", ""},
		{"gopher://10.0.0.2", ""},
		{"10.0.0.2:5303", ""},
		{"//10.0.0.2:5303", ""},
		{"mailto:a@b.example", ""},
		{"", ""},
		// User info.
		{"http://user@10.0.0.2", ""},
		{"http://user:pass@10.0.0.2", ""},
		{"http://:@10.0.0.2", ""},
		// Link-local, multicast, unspecified.
		{"http://169.254.169.254/", ""},
		{"http://169.254.0.1:80", ""},
		{"http://[fe80::1]:5303", ""},
		{"http://[fe80::1%25eth0]:5303", ""},
		{"http://224.0.0.1", ""},
		{"http://239.255.255.250:1900", ""},
		{"http://[ff02::1]", ""},
		{"http://[ff05::2]", ""},
		{"http://[ff01::1]", ""},
		{"http://0.0.0.0:5303", ""},
		{"http://[::]:5303", ""},
		{"http://[::ffff:169.254.1.1]", ""},
		{"http://[::ffff:0.0.0.0]", ""},
		// Numeric host names some resolvers read as IPv4.
		{"http://2852039166/", ""},
		{"http://0xa9fea9fe/", ""},
		{"http://169.254.43518/", ""},
		{"http://0251.0376.0251.0376/", ""},
		// Other junk.
		{"http://10.0.0.2/?q=1", ""},
		{"http://10.0.0.2/#frag", ""},
		{"http://10.0.0.2:0", ""},
		{"http://10.0.0.2:99999", ""},
		{"http://", ""},
		{"http://host.example/" + strings.Repeat("a", 2100), ""},
		{"http://bad host/", ""},
	} {
		got := f.Filter([]string{tc.in}, "")
		switch {
		case tc.want == "" && len(got) != 0:
			t.Errorf("%q kept as %v", tc.in, got)
		case tc.want != "" && (len(got) != 1 || got[0] != tc.want):
			t.Errorf("%q → %v, want %q", tc.in, got, tc.want)
		}
	}
}

func TestFilterSkipDedupAndLimit(t *testing.T) {
	f, _ := newFetcher(t, Options{})
	in := []string{"http://a.example:1", "http://A.example:1/", "http://storage.example:5303", "http://b.example:1",
		"http://c.example:1", "http://d.example:1"}
	got := f.Filter(in, "http://STORAGE.example:5303/")
	if want := []string{"http://a.example:1", "http://b.example:1", "http://c.example:1"}; !slices.Equal(got, want) {
		t.Fatalf("Filter = %v, want %v", got, want)
	}
	f.SetMaxProviders(1)
	if got := f.Filter(in, ""); len(got) != 1 {
		t.Fatalf("max 1: %v", got)
	}
	f.SetMaxProviders(0) // counts as 1
	if got := f.Filter(in, ""); len(got) != 1 {
		t.Fatalf("max 0: %v", got)
	}
	f.SetMaxProviders(10)
	f.health.markBad("http://a.example:1")
	if got := f.Filter(in, ""); got[0] != "http://storage.example:5303" || len(got) != 4 {
		t.Fatalf("after a bad mark: %v", got)
	}
	// Filtering is idempotent.
	if again := f.Filter(f.Filter(in, ""), ""); len(again) != 4 {
		t.Fatalf("refiltered: %v", again)
	}
}

func TestBreakerLRUBound(t *testing.T) {
	f, m := newFetcher(t, Options{})
	first := f.health.breakerFor("http://10.0.0.0:1")
	for i := 1; i < 1500; i++ {
		f.health.breakerFor(fmt.Sprintf("http://10.0.%d.%d:1", i/256, i%256))
	}
	if n := f.health.tracked(); n != maxTracked {
		t.Fatalf("%d breakers tracked, want %d", n, maxTracked)
	}
	if f.health.breakerFor("http://10.0.0.0:1") == first {
		t.Fatal("the least recently used breaker was kept")
	}
	last := f.health.breakerFor("http://10.0.5.219:1") // i = 1499
	if f.health.breakerFor("http://10.0.5.219:1") != last {
		t.Fatal("breakers are not reused")
	}
	if metric(m, breakerSeries("closed")) != 1 {
		t.Fatalf("gauges %v", m.Values())
	}
	// New settings start a fresh table.
	f.SetBreaker(client.IntervalBreakerConfig{BreakerConsecutiveFailures: 2})
	if f.health.tracked() != 0 {
		t.Fatal("SetBreaker kept old breakers")
	}
	for i := range 2000 {
		f.health.markBad(fmt.Sprintf("http://10.1.%d.%d:1", i/256, i%256))
	}
	if f.health.bad.Len() != maxTracked {
		t.Fatalf("%d bad marks", f.health.bad.Len())
	}
}
