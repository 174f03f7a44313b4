package vfetch

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/ronhq/ron/store"
	"github.com/ronhq/ron/store/storetest"
	"github.com/ronhq/ron/store/verified"
	"github.com/ronhq/ron/store/verified/vfetch/vfetchtest"
)

// mustID parses a canonical id.
func mustID(t *testing.T, s string) store.ID { return storetest.MustID(t, s) }

func TestOutboard(t *testing.T) {
	data, id := pattern(2*cs + 1)
	n := &fakeNet{answer: source(data, "")}
	tr, err := n.requester().Outboard(t.Context(), "http://s.test", id)
	if err != nil || tr.Size != int64(len(data)) || tr.Count() != 3 || tr.ID != id || !bytes.Equal(tr.Outboard, verified.TreeOf(data).Outboard) {
		t.Fatalf("%+v %v", tr, err)
	}
	reqs := n.requests()
	if len(reqs) != 1 || reqs[0].URL.Path != "/o/"+id.String()+"/outboard" || reqs[0].Method != http.MethodGet {
		t.Fatalf("requests %v", reqs)
	}
}

// zeros is an endless body of zero bytes.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

func TestOutboardBadInput(t *testing.T) {
	data, id := pattern(cs + 1)
	good := verified.TreeOf(data).Outboard
	doc := func(b []byte) *http.Response { return answer(http.StatusOK, bytes.NewReader(b), int64(len(b))) }
	for _, row := range []struct {
		name   string
		answer *http.Response
		want   error
		status int // for a *StatusError
	}{
		{"redirect", answer(http.StatusFound, strings.NewReader(""), 0, "Location", "http://elsewhere/"), nil, http.StatusFound},
		{"server error", answer(http.StatusInternalServerError, strings.NewReader(""), 0), nil, http.StatusInternalServerError},
		{"gone (a /chunks-era answer)", answer(http.StatusGone, strings.NewReader(""), 0), nil, http.StatusGone},
		{"announced too long", answer(http.StatusOK, strings.NewReader("{}"), verified.MaxOutboardBytes+1), verified.ErrBadOutboard, 0},
		{"endless", answer(http.StatusOK, zeros{}, -1), verified.ErrBadOutboard, 0},
		{"empty", doc(nil), verified.ErrBadOutboard, 0},
		{"truncated", doc(good[:len(good)-1]), verified.ErrBadOutboard, 0},
		{"another size", doc(verified.TreeOf(data[:cs]).Outboard), nil, 0},
		{"the empty object's for another id", doc(verified.TreeOf(nil).Outboard), verified.ErrMismatch, 0},
	} {
		t.Run(row.name, func(t *testing.T) {
			n := &fakeNet{answer: func(*http.Request) *http.Response { return row.answer }}
			tr, err := n.requester().Outboard(t.Context(), "http://s.test", id)
			var se *StatusError
			switch {
			case row.status != 0 && (!errors.As(err, &se) || se.Code != row.status):
				t.Fatalf("%v, want a %d StatusError", err, row.status)
			case row.want != nil && !errors.Is(err, row.want):
				t.Fatalf("%v, want %v", err, row.want)
			case row.want == nil && row.status == 0 && (err != nil || tr.Size != cs):
				// A well-shaped outboard of another size parses: its lie
				// shows when groups are verified.
				t.Fatalf("%+v %v", tr, err)
			}
		})
	}
}

// A 404 on /outboard from a source that holds the object is a ron from
// before verified streaming: ErrNoOutboard, naming the fix. A 404 from a
// source without the object stays a 404.
func TestOutboardV1Source(t *testing.T) {
	data, id := pattern(cs + 1)
	n := &fakeNet{answer: serve(vfetchtest.V1(data), "")}
	_, err := n.requester().Outboard(t.Context(), "http://s.test", id)
	if !errors.Is(err, ErrNoOutboard) || !strings.Contains(err.Error(), "upgrade") {
		t.Fatalf("v1 source: %v", err)
	}
	reqs := n.requests()
	if len(reqs) != 2 || reqs[1].Method != http.MethodHead || reqs[1].URL.Path != "/o/"+id.String() {
		t.Fatalf("requests %v", reqs)
	}
	_, other := pattern(10)
	var se *StatusError
	if _, err := n.requester().Outboard(t.Context(), "http://s.test", other); !errors.As(err, &se) || se.Code != http.StatusNotFound {
		t.Fatalf("absent object: %v", err)
	}
}

// An outboard body that breaks off is the transport's error, not a bad
// outboard.
func TestOutboardReadError(t *testing.T) {
	_, id := pattern(10)
	broken := io.MultiReader(strings.NewReader("12345"), errReader{})
	n := &fakeNet{answer: func(*http.Request) *http.Response { return answer(http.StatusOK, broken, -1) }}
	if _, err := n.requester().Outboard(t.Context(), "http://s.test", id); !errors.Is(err, errBroken) {
		t.Fatalf("%v", err)
	}
}

var errBroken = errors.New("connection reset")

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, errBroken }
