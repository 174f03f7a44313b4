package vfetch

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/ronhq/ron/store/verified"
	"github.com/ronhq/ron/store/verified/vfetch/vfetchtest"
)

// Open reads the whole object or a group-aligned range, verified.
func TestOpen(t *testing.T) {
	data, _ := pattern(3*cs + 5)
	tr := verified.TreeOf(data)
	n := &fakeNet{answer: source(data, "text/plain; charset=utf-8")}
	for _, row := range []struct {
		first, last int
		status      int
	}{{0, 3, http.StatusOK}, {1, 2, http.StatusPartialContent}, {3, 3, http.StatusPartialContent}, {0, 0, http.StatusPartialContent}} {
		b, err := n.requester().Open(t.Context(), "http://s.test", tr, row.first, row.last)
		if err != nil {
			t.Fatalf("%d..%d: %v", row.first, row.last, err)
		}
		got, _, err := drain(b)
		b.Close()
		off, k := tr.Span(row.first, row.last)
		if err != io.EOF || !bytes.Equal(got, data[off:off+k]) || b.Status != row.status || b.ContentType != "text/plain; charset=utf-8" {
			t.Fatalf("%d..%d: %v, %d bytes, %d %q", row.first, row.last, err, len(got), b.Status, b.ContentType)
		}
	}
}

// drain reads b to its first error (io.EOF at the end): the bytes and the
// number of groups released.
func drain(b *Body) ([]byte, int, error) {
	var got []byte
	for n := 0; ; n++ {
		c, err := b.Next()
		if err != nil {
			return got, n, err
		}
		got = append(got, c...)
	}
}

// Answers framed unlike the request are refused before any byte is read;
// wrong bytes fail verification.
func TestOpenBadInput(t *testing.T) {
	data, _ := pattern(2*cs + 5)
	tr := verified.TreeOf(data)
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
			_, err := n.requester().Open(t.Context(), "http://s.test", tr, row.first, row.last)
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
		b, err := n.requester().Open(t.Context(), "http://s.test", tr, 0, 2)
		if err != nil {
			t.Fatal(err)
		}
		got, _, err := drain(b)
		b.Close()
		if err == io.EOF || len(got) >= len(data) || !bytes.HasPrefix(data, got) {
			t.Fatalf("a wrong %d-byte body: %v after %d bytes", len(body), err, len(got))
		}
	}
}

// The lying sources of every reader's table (docs/storage.md §4), read
// through Outboard and Open whole and for ranges on and off group
// boundaries: every byte Next returns is the object's own, and exactly the
// groups before the first bad one the range covers are returned.
func TestOpenLiars(t *testing.T) {
	data, _ := pattern(5*cs + 1234)
	size := int64(len(data))
	for _, l := range vfetchtest.Liars(data) {
		t.Run(l.Name, func(t *testing.T) {
			n := &fakeNet{answer: serve(l.Object, "")}
			for _, r := range append(vfetchtest.Ranges(size), vfetchtest.Range{Start: 0, End: size - 1}) {
				got, err := readRange(t, n.requester(), l.ID.String(), r)
				want, complete := l.Delivers(data, r.Start, r.End)
				if !bytes.Equal(got, want) || complete != (err == nil) {
					t.Fatalf("%s: %d bytes, %v; want %d bytes, complete %v", r.Header(), len(got), err, len(want), complete)
				}
			}
		})
	}
}

// readRange reads the bytes [r.Start, r.End] of id as a reader does: the
// outboard, the covering groups, the range cut from them. It returns the
// range's bytes received and the first error (nil at a clean end).
func readRange(t *testing.T, req *Requester, id string, r vfetchtest.Range) ([]byte, error) {
	tr, err := req.Outboard(t.Context(), "http://s.test", mustID(t, id))
	if err != nil {
		return nil, err
	}
	first, last := tr.GroupRange(r.Start, r.End)
	b, err := req.Open(t.Context(), "http://s.test", tr, first, last)
	if err != nil {
		return nil, err
	}
	defer b.Close()
	off, _ := tr.Span(first, last)
	got, _, err := drain(b)
	if err == io.EOF {
		err = nil
	}
	return got[min(int64(len(got)), r.Start-off):min(int64(len(got)), r.End+1-off)], err
}

// Head needs a 200 with a Content-Length.
func TestHead(t *testing.T) {
	data, id := pattern(cs + 7)
	n := &fakeNet{answer: source(data, "bad;;")}
	if size, ctype, err := n.requester().Head(t.Context(), "http://s.test", id); err != nil || size != int64(len(data)) || ctype != OctetStream {
		t.Fatalf("HEAD: %d %q %v", size, ctype, err)
	}
	noLength := &fakeNet{answer: func(*http.Request) *http.Response { return answer(http.StatusOK, bytes.NewReader(data), -1) }}
	if _, _, err := noLength.requester().Head(t.Context(), "http://s.test", id); !errors.Is(err, ErrProtocol) {
		t.Fatalf("HEAD without Content-Length: %v", err)
	}
}
