package repairlink

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/roles/storage/storageapi"
)

// FuzzParsePaceRequest: the parser never panics, and what it accepts is in
// range and round-trips.
func FuzzParsePaceRequest(f *testing.F) {
	for _, s := range []string{`{"bytes_per_s":0,"duration_s":1}`, `{"bytes_per_s":209715200,"duration_s":3600}`,
		`{"bytes_per_s":1}`, `{`, `[]`, `{"bytes_per_s":1e3,"duration_s":5}`, `null`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		n, d, err := parsePaceRequest(body)
		if err != nil {
			if he := httpx.AsError(err); he.Status != http.StatusBadRequest {
				t.Fatalf("status %d for %q", he.Status, body)
			}
			return
		}
		if n < 0 || d < time.Second || d > 24*time.Hour || d%time.Second != 0 {
			t.Fatalf("accepted %d for %v from %q", n, d, body)
		}
		again, _ := json.Marshal(storageapi.RepairPaceRequest{BytesPerS: &n, DurationS: ptr(int64(d / time.Second))})
		if n2, d2, err := parsePaceRequest(again); err != nil || n2 != n || d2 != d {
			t.Fatalf("round trip of %q: %d %v %v", body, n2, d2, err)
		}
	})
}

func ptr[T any](v T) *T { return &v }
