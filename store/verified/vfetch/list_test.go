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

func TestList(t *testing.T) {
	data, id := pattern(2*cs + 1)
	n := &fakeNet{answer: source(data, "")}
	l, err := n.requester().List(t.Context(), "http://s.test", id)
	if err != nil || l.Size != int64(len(data)) || l.Count() != 3 || l.ID != id {
		t.Fatalf("%+v %v", l, err)
	}
}

// zeros is an endless body of zero bytes.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

func TestListBadInput(t *testing.T) {
	data, id := pattern(cs + 1)
	other, _ := pattern(10)
	doc := func(b []byte) *http.Response { return answer(http.StatusOK, bytes.NewReader(b), int64(len(b))) }
	for _, row := range []struct {
		name   string
		answer *http.Response
		want   error
		status int // for a *StatusError
	}{
		{"not found", answer(http.StatusNotFound, strings.NewReader(`{"error":{}}`), -1), nil, http.StatusNotFound},
		{"redirect", answer(http.StatusFound, strings.NewReader(""), 0, "Location", "http://elsewhere/"), nil, http.StatusFound},
		{"announced too long", answer(http.StatusOK, strings.NewReader("{}"), verified.MaxListBytes+1), verified.ErrBadList, 0},
		{"endless", answer(http.StatusOK, zeros{}, -1), verified.ErrBadList, 0},
		{"not JSON", doc([]byte("chunks")), verified.ErrBadList, 0},
		{"empty", doc(nil), verified.ErrBadList, 0},
		{"another object's list", doc(verified.ListOf(other).AppendJSON(nil)), verified.ErrBadList, 0},
		{"truncated", doc(verified.ListOf(data).AppendJSON(nil)[:40]), verified.ErrBadList, 0},
	} {
		t.Run(row.name, func(t *testing.T) {
			n := &fakeNet{answer: func(*http.Request) *http.Response { return row.answer }}
			_, err := n.requester().List(t.Context(), "http://s.test", id)
			var se *StatusError
			switch {
			case row.status != 0 && (!errors.As(err, &se) || se.Code != row.status):
				t.Fatalf("%v, want a %d StatusError", err, row.status)
			case row.want != nil && !errors.Is(err, row.want):
				t.Fatalf("%v, want %v", err, row.want)
			}
		})
	}
}

// A list body that breaks off is the transport's error, not a bad list.
func TestListReadError(t *testing.T) {
	_, id := pattern(10)
	broken := io.MultiReader(strings.NewReader(`{"id":`), errReader{})
	n := &fakeNet{answer: func(*http.Request) *http.Response { return answer(http.StatusOK, broken, -1) }}
	if _, err := n.requester().List(t.Context(), "http://s.test", id); !errors.Is(err, errBroken) {
		t.Fatalf("%v", err)
	}
}

var errBroken = errors.New("connection reset")

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, errBroken }
