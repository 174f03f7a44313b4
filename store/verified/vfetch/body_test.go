package vfetch

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/ronhq/ron/store/verified"
)

// Open reads the whole object or a chunk-aligned range, verified.
func TestOpen(t *testing.T) {
	data, id := pattern(3*cs + 5)
	l := verified.ListOf(data)
	n := &fakeNet{answer: source(data, "text/plain; charset=utf-8")}
	for _, row := range []struct {
		first, last int
		status      int
	}{{0, 3, http.StatusOK}, {1, 2, http.StatusPartialContent}, {3, 3, http.StatusPartialContent}, {0, 0, http.StatusPartialContent}} {
		b, err := n.requester().Open(t.Context(), "http://s.test", id, l, row.first, row.last)
		if err != nil {
			t.Fatalf("%d..%d: %v", row.first, row.last, err)
		}
		got, _, err := drain(b)
		b.Close()
		off, k := l.Span(row.first, row.last)
		if err != io.EOF || !bytes.Equal(got, data[off:off+k]) || b.Status != row.status || b.ContentType != "text/plain; charset=utf-8" {
			t.Fatalf("%d..%d: %v, %d bytes, %d %q", row.first, row.last, err, len(got), b.Status, b.ContentType)
		}
	}
}

// Answers framed unlike the request are refused before any byte is read;
// wrong bytes fail verification.
func TestOpenBadInput(t *testing.T) {
	data, id := pattern(2*cs + 5)
	l := verified.ListOf(data)
	flipped := bytes.Clone(data)
	flipped[cs+3] ^= 1
	rangeOf := func(cr string, body []byte, cl int64) *http.Response {
		return answer(http.StatusPartialContent, bytes.NewReader(body), cl, "Content-Range", cr)
	}
	span := data[cs : 2*cs]
	for _, row := range []struct {
		name        string
		first, last int
		answer      *http.Response
		want        error
		status      int
	}{
		{"whole answered 206", 0, 2, rangeOf("bytes 0-10/131077", data, int64(len(data))), nil, http.StatusPartialContent},
		{"range answered 200", 1, 1, whole(data), nil, http.StatusOK},
		{"not found", 0, 2, answer(http.StatusNotFound, strings.NewReader(""), 0), nil, http.StatusNotFound},
		{"server error", 0, 2, answer(http.StatusServiceUnavailable, strings.NewReader(""), 0), nil, http.StatusServiceUnavailable},
		{"whole, wrong length", 0, 2, answer(http.StatusOK, bytes.NewReader(data), int64(len(data))-1), ErrProtocol, 0},
		{"range, no Content-Range", 1, 1, answer(http.StatusPartialContent, bytes.NewReader(span), cs), ErrProtocol, 0},
		{"range, other Content-Range", 1, 1, rangeOf("bytes 0-65535/131077", span, cs), ErrProtocol, 0},
		{"range, other total", 1, 1, rangeOf("bytes 65536-131071/131078", span, cs), ErrProtocol, 0},
		{"range, wrong length", 1, 1, rangeOf("bytes 65536-131071/131077", span, cs+1), ErrProtocol, 0},
	} {
		t.Run(row.name, func(t *testing.T) {
			n := &fakeNet{answer: func(*http.Request) *http.Response { return row.answer }}
			_, err := n.requester().Open(t.Context(), "http://s.test", id, l, row.first, row.last)
			var se *StatusError
			switch {
			case row.status != 0 && (!errors.As(err, &se) || se.Code != row.status):
				t.Fatalf("%v, want a %d StatusError", err, row.status)
			case row.want != nil && !errors.Is(err, row.want):
				t.Fatalf("%v, want %v", err, row.want)
			}
		})
	}
	for _, body := range [][]byte{flipped, data[:len(data)-1], append(bytes.Clone(data), 0)} {
		n := &fakeNet{answer: func(*http.Request) *http.Response { return answer(http.StatusOK, bytes.NewReader(body), -1) }}
		b, err := n.requester().Open(t.Context(), "http://s.test", id, l, 0, 2)
		if err != nil {
			t.Fatal(err)
		}
		got, _, err := drain(b)
		b.Close()
		if err == io.EOF || len(got) >= len(data) {
			t.Fatalf("a wrong %d-byte body: %v after %d bytes", len(body), err, len(got))
		}
	}
}

// OpenWhole and Head need a 200 with a Content-Length; OpenWhole's body is
// checked by the whole hash.
func TestOpenWholeAndHead(t *testing.T) {
	data, id := pattern(cs + 7)
	n := &fakeNet{answer: source(data, "bad;;")}
	b, size, err := n.requester().OpenWhole(t.Context(), "http://s.test", id)
	if err != nil || size != int64(len(data)) || b.ContentType != OctetStream || b.Status != http.StatusOK {
		t.Fatalf("%v %d", err, size)
	}
	got, _, err := drain(b)
	b.Close()
	if err != io.EOF || !bytes.Equal(got, data) {
		t.Fatalf("%v, %d bytes", err, len(got))
	}
	if size, ctype, err := n.requester().Head(t.Context(), "http://s.test", id); err != nil || size != int64(len(data)) || ctype != OctetStream {
		t.Fatalf("HEAD: %d %q %v", size, ctype, err)
	}
	noLength := &fakeNet{answer: func(*http.Request) *http.Response { return answer(http.StatusOK, bytes.NewReader(data), -1) }}
	if _, _, err := noLength.requester().OpenWhole(t.Context(), "http://s.test", id); !errors.Is(err, ErrProtocol) {
		t.Fatalf("GET without Content-Length: %v", err)
	}
	if _, _, err := noLength.requester().Head(t.Context(), "http://s.test", id); !errors.Is(err, ErrProtocol) {
		t.Fatalf("HEAD without Content-Length: %v", err)
	}
	wrong := bytes.Clone(data)
	wrong[0] ^= 1
	liar := &fakeNet{answer: func(*http.Request) *http.Response { return whole(wrong) }}
	b, _, err = liar.requester().OpenWhole(t.Context(), "http://s.test", id)
	if err != nil {
		t.Fatal(err)
	}
	got, _, err = drain(b)
	b.Close()
	if !errors.Is(err, verified.ErrMismatch) || len(got) != cs {
		t.Fatalf("a wrong body: %v after %d bytes (the last chunk must be held)", err, len(got))
	}
}
