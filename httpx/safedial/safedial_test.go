package safedial

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestControl(t *testing.T) {
	for _, row := range []struct {
		address string
		ok      bool
	}{
		{"127.0.0.1:80", true},
		{"10.1.2.3:443", true},
		{"192.168.0.1:8080", true},
		{"203.0.113.9:80", true},
		{"[::1]:80", true},
		{"[2001:db8::1]:443", true},
		{"[fd00::1]:80", true},
		{"169.254.169.254:80", false}, // link-local: cloud metadata
		{"[::ffff:169.254.169.254]:80", false},
		{"[fe80::1]:80", false},
		{"0.0.0.0:80", false},
		{"[::]:80", false},
		{"224.0.0.1:80", false},
		{"239.1.2.3:80", false},
		{"[ff02::1]:80", false},
		{"[ff01::1]:80", false},
		{"[ff0e::1]:80", false},
		{"[::ffff:0.0.0.0]:80", false},
		{"example.com:80", false}, // not resolved: not an address
		{"127.0.0.1", false},
		{"", false},
	} {
		err := Control("tcp", row.address, nil)
		if (err == nil) != row.ok {
			t.Errorf("Control(%q) = %v, want ok %v", row.address, err, row.ok)
		}
	}
}

func TestUsableUnmaps(t *testing.T) {
	for _, s := range []string{"::ffff:127.0.0.1", "::ffff:10.0.0.1"} {
		if !Usable(netip.MustParseAddr(s)) {
			t.Errorf("%s refused", s)
		}
	}
	if Usable(netip.MustParseAddr("::ffff:224.0.0.1")) {
		t.Error("mapped multicast accepted")
	}
}

// A guarded transport reaches loopback and refuses a link-local address
// before any packet is sent.
func TestGuard(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	tr := Guard(http.DefaultTransport.(*http.Transport).Clone())
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr}
	resp, err := c.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, "http://169.254.169.254/latest/meta-data/", nil)
	if _, err := c.Do(req); err == nil || !strings.Contains(err.Error(), "not routable") {
		t.Fatalf("link-local: %v", err)
	}
}
