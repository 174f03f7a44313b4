package peer

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/store"
)

func ids(n int) []store.ID {
	out := make([]store.ID, n)
	for i := range out {
		out[i] = store.Sum([]byte{byte(i), byte(i >> 8)})
	}
	return out
}

// TestHas: the request is {"ids":[…]} with the token; the answer marks the
// present ids and only the asked ones.
func TestHas(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		asked := ids(3)
		stranger := store.Sum([]byte("not asked"))
		f := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var req struct {
				IDs []string `json:"ids"`
			}
			data, _ := io.ReadAll(r.Body)
			if err := json.Unmarshal(data, &req); err != nil || len(req.IDs) != 3 || req.IDs[1] != asked[1].String() {
				t.Errorf("body %s", data)
			}
			if r.Method != http.MethodPost || r.URL.Path != "/inventory/has" || r.Header.Get("Authorization") != "Bearer node" ||
				r.Header.Get("Content-Type") != "application/json" {
				t.Errorf("%s %s %v", r.Method, r.URL.Path, r.Header)
			}
			_ = json.NewEncoder(w).Encode(map[string][]string{"present": {asked[0].String(), stranger.String(), asked[2].String()}})
		}), Options{Token: staticToken("node")})
		held, err := f.c.Has(context.Background(), f.base, asked)
		if err != nil {
			t.Fatal(err)
		}
		want := map[store.ID]bool{asked[0]: true, asked[1]: false, asked[2]: true}
		if len(held) != len(want) {
			t.Fatalf("held %v", held)
		}
		for id, ok := range want {
			if held[id] != ok {
				t.Fatalf("held[%s] = %v", id.Prefix(), held[id])
			}
		}
	})
}

// TestHasFailures: bad counts fail before any I/O; refusals, garbage and
// silence are *PutError values.
func TestHasFailures(t *testing.T) {
	cases := []struct {
		name    string
		ids     []store.ID
		handler http.HandlerFunc
		refuse  bool
		status  int
		reason  string // "" = a plain error before I/O
	}{
		{name: "no ids", ids: nil},
		{name: "too many ids", ids: ids(MaxHasIDs + 1)},
		{name: "busy", ids: ids(1), status: 429, reason: ReasonBusy,
			handler: func(w http.ResponseWriter, r *http.Request) {
				httpx.WriteError(w, "", httpx.NewError(429, httpx.CodeBusy, "busy"))
			}},
		{name: "unavailable", ids: ids(1), status: 503, reason: ReasonUnavailable,
			handler: func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(503) }},
		{name: "forbidden", ids: ids(1), status: 403, reason: ReasonRejected,
			handler: func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(403) }},
		{name: "garbage", ids: ids(1), status: 200, reason: ReasonRejected,
			handler: func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "<html>") }},
		{name: "bad id in answer", ids: ids(1), status: 200, reason: ReasonRejected,
			handler: func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, `{"present":["b3:XYZ"]}`) }},
		{name: "oversized answer", ids: ids(1), status: 200, reason: ReasonRejected,
			handler: func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.WriteString(w, `{"present":[`+strings.Repeat(" ", maxHasReplyBytes)+`]}`)
			}},
		{name: "refused", ids: ids(1), refuse: true, reason: ReasonConnection},
		{name: "silent", ids: ids(1), reason: ReasonStall,
			handler: func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.Copy(io.Discard, r.Body) // the server then notices the client hanging up
				<-r.Context().Done()
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var reached bool
				f := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					reached = true
					if tc.handler != nil {
						tc.handler(w, r)
					}
				}), Options{Stall: time.Second})
				f.pl.SetRefuse(tc.refuse)
				held, err := f.c.Has(context.Background(), f.base, tc.ids)
				if err == nil || held != nil {
					t.Fatalf("held %v err %v", held, err)
				}
				if tc.reason == "" {
					if ReasonOf(err) != "" || reached {
						t.Fatalf("err %v, reached %v: want a plain error before I/O", err, reached)
					}
					return
				}
				putErr(t, err, tc.status, tc.reason)
			})
		})
	}
}
