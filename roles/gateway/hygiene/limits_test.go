package hygiene

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/ronhq/ron/httpx"
)

func fields(n int) http.Header {
	h := http.Header{}
	for i := range n {
		h.Set("X-F"+strconv.Itoa(i), "v")
	}
	return h
}

func TestCheckHeaderLimits(t *testing.T) {
	repeated := http.Header{"Accept": make([]string, 101)}
	tests := []struct {
		name string
		h    http.Header
		fail bool
	}{
		{"nil", nil, false},
		{"100 fields", fields(100), false},
		{"101 fields", fields(101), true},
		{"101 repeated lines of one name", repeated, true},
		{"99 plus two repeats", func() http.Header { h := fields(99); h.Add("X-F0", "w"); return h }(), false},
		{"100 plus one repeat", func() http.Header { h := fields(100); h.Add("X-F0", "w"); return h }(), true},
		{"value of 8 KiB", http.Header{"X-Big": {strings.Repeat("a", 8<<10)}}, false},
		{"value over 8 KiB", http.Header{"X-Big": {strings.Repeat("a", 8<<10+1)}}, true},
		{"second value over 8 KiB", http.Header{"X-Big": {"a", strings.Repeat("a", 8<<10+1)}}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckHeaderLimits(tt.h)
			if !tt.fail {
				if err != nil {
					t.Fatalf("CheckHeaderLimits: %v, want nil", err)
				}
				return
			}
			var he *httpx.Error
			if !errors.As(err, &he) || he.Status != http.StatusRequestHeaderFieldsTooLarge {
				t.Fatalf("CheckHeaderLimits = %v, want 431", err)
			}
		})
	}
}
