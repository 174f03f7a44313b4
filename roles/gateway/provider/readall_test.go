package provider

import (
	"bytes"
	"net/http"
	"testing"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/store/verified/vfetch/vfetchtest"
)

func TestReadAll(t *testing.T) {
	data, id := pattern(2*cs + 3)
	good := honest(data)
	good.ctype = "application/vnd.ron.manifest+json; charset=utf-8"
	f, m := newFetcher(t, Options{})
	badURL, goodURL := start(t, corrupt(data, 2*cs)), start(t, good)

	b, ctype, err := f.ReadAll(t.Context(), id, []string{badURL, goodURL}, int64(len(data)))
	if err != nil || !bytes.Equal(b, data) || ctype != good.ctype {
		t.Fatalf("ReadAll: %d bytes, %q, %v", len(b), ctype, err)
	}
	if metric(m, mismatchSeries) != 1 {
		t.Fatal("mismatch not counted")
	}
	// Larger than max: 502 malformed too_large, the provider not marked.
	_, _, err = f.ReadAll(t.Context(), id, []string{goodURL}, int64(len(data)-1))
	if e := httpx.AsError(err); e.Status != http.StatusBadGateway || e.Code != httpx.CodeMalformed || e.Details["reason"] != "too_large" {
		t.Fatalf("too large: %v", err)
	}
	if len(f.Filter([]string{goodURL}, "")) != 1 {
		t.Fatal("too large marked the provider bad")
	}
	// Only liars: 502 hash_mismatch.
	liar := start(t, selfConsistent(data, 5))
	_, _, err = f.ReadAll(t.Context(), id, []string{liar}, 1<<20)
	if e := httpx.AsError(err); e.Status != http.StatusBadGateway || e.Details["reason"] != "hash_mismatch" {
		t.Fatalf("liar: %v", err)
	}
	// An invalid outboard marks the provider bad too; nobody left →
	// no_provider.
	broken := honest(data)
	broken.outboard = broken.outboard[:len(broken.outboard)-1]
	brokenURL := start(t, broken)
	_, _, err = f.ReadAll(t.Context(), id, []string{brokenURL}, 1<<20)
	if e := httpx.AsError(err); e.Status != http.StatusBadGateway || e.Details["reason"] != "no_provider" {
		t.Fatalf("broken outboard: %v", err)
	}
	if len(f.Filter([]string{brokenURL}, "")) != 0 {
		t.Fatal("an invalid outboard did not mark the provider bad")
	}
	// The empty object.
	empty := honest(nil)
	b, _, err = f.ReadAll(t.Context(), empty.id, []string{start(t, empty)}, 0)
	if err != nil || len(b) != 0 {
		t.Fatalf("empty: %q %v", b, err)
	}
}

// No lying source of the table (docs/storage.md §4) gets ReadAll to
// return anything but the object: a liar alone is a 502, a liar then an
// honest provider is the object.
func TestReadAllLiars(t *testing.T) {
	data, _ := pattern(5*cs + 1234)
	goodURL := start(t, honest(data))
	for _, l := range vfetchtest.Liars(data) {
		f, _ := newFetcher(t, Options{})
		liar := start(t, serving(l.Object))
		if b, _, err := f.ReadAll(t.Context(), l.ID, []string{liar}, 1<<20); httpx.AsError(err).Status != http.StatusBadGateway || b != nil {
			t.Fatalf("%s alone: %d bytes, %v", l.Name, len(b), err)
		}
		f, _ = newFetcher(t, Options{})
		if b, _, err := f.ReadAll(t.Context(), l.ID, []string{liar, goodURL}, 1<<20); err != nil || !bytes.Equal(b, data) {
			t.Fatalf("%s, then an honest provider: %d bytes, %v", l.Name, len(b), err)
		}
	}
}
