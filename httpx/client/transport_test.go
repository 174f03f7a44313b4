package client

import (
	"net/http"
	"testing"
	"time"
)

func TestNewTransportBases(t *testing.T) {
	def := NewTransport(TransportOptions{MaxIdleConnsPerHost: 64})
	if def.Proxy == nil || !def.ForceAttemptHTTP2 || def.MaxIdleConns != 100 || def.MaxIdleConnsPerHost != 64 ||
		def.IdleConnTimeout != 90*time.Second || def.TLSHandshakeTimeout != 10*time.Second {
		t.Fatalf("default base: %+v", def)
	}
	if def == http.DefaultTransport {
		t.Fatal("the default transport itself was returned, not a clone")
	}
	bare := NewTransport(TransportOptions{Base: BaseBare, DialTimeout: time.Second, MaxIdleConnsPerHost: 8,
		DisableCompression: true})
	if bare.Proxy != nil || bare.ForceAttemptHTTP2 || bare.MaxIdleConns != 0 || bare.MaxIdleConnsPerHost != 8 ||
		bare.DialContext == nil || !bare.DisableCompression || bare.TLSHandshakeTimeout != 0 {
		t.Fatalf("bare base: %+v", bare)
	}
	if NewTransport(TransportOptions{Base: BaseBare}).DialContext != nil {
		t.Fatal("a bare transport without DialTimeout has a dialer")
	}
	if NewTransport(TransportOptions{Untrusted: true}).DialContext == nil {
		t.Fatal("an untrusted transport does not dial through safedial")
	}
}
