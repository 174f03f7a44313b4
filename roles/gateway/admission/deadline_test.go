package admission

import (
	"errors"
	"math"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ronhq/ron/httpx"
)

var arrival = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func TestRequestDeadline(t *testing.T) {
	tests := []struct {
		name    string
		values  []string // nil: no header
		forward time.Duration
		want    time.Duration // from arrival
	}{
		{"absent", nil, 5 * time.Second, 5 * time.Second},
		{"absent, default forward", nil, 0, DefaultForwardTimeout},
		{"shorter", []string{"2"}, 5 * time.Second, 2 * time.Second},
		{"decimal", []string{"0.25"}, 5 * time.Second, 250 * time.Millisecond},
		{"minimum", []string{"0.001"}, 5 * time.Second, time.Millisecond},
		{"longer than forward", []string{"30"}, 5 * time.Second, 5 * time.Second},
		{"maximum", []string{"3600"}, 2 * time.Hour, time.Hour},
		{"maximum with zeros", []string{"3600.000000000000"}, 2 * time.Hour, time.Hour},
		{"leading zeros", []string{"0002.5"}, 5 * time.Second, 2500 * time.Millisecond},
		{"blanks", []string{" \t1.5 "}, 5 * time.Second, 1500 * time.Millisecond},
		{"nanoseconds", []string{"1.000000001"}, 5 * time.Second, time.Second + 1},
		{"digits past the nanosecond", []string{"1.0000000019"}, 5 * time.Second, time.Second + 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := http.Header{}
			for _, v := range tc.values {
				h.Add("Request-Timeout", v)
			}
			got, err := RequestDeadline(arrival, h, tc.forward)
			if err != nil || got.Sub(arrival) != tc.want {
				t.Fatalf("deadline %s after arrival, %v; want %s", got.Sub(arrival), err, tc.want)
			}
		})
	}
}

func TestRequestDeadlineBad(t *testing.T) {
	bad := [][]string{
		{"abc"}, {"-1"}, {"0"}, {"99999"}, {""}, {" "}, {"0.0"}, {"0.0009"}, {"0.000999999999999"},
		{"3600.001"}, {"3600.0000000001"}, {"3601"}, {"10000"}, {"1e3"}, {".5"}, {"5."}, {"+1"},
		{"1,5"}, {"1.5.2"}, {"0x10"}, {"inf"}, {"NaN"}, {"1s"}, {"250ms"}, {"١"}, {"1 2"},
		{"1", "2"}, {"2", "2"},
	}
	for _, vals := range bad {
		h := http.Header{}
		for _, v := range vals {
			h.Add("Request-Timeout", v)
		}
		_, err := RequestDeadline(arrival, h, 5*time.Second)
		he := httpx.AsError(err)
		if !errors.Is(err, ErrRequestTimeout) || he.Status != http.StatusBadRequest || he.Code != httpx.CodeBadRequest {
			t.Errorf("Request-Timeout %q: %v", vals, err)
		}
	}
}

var timeoutSyntax = regexp.MustCompile(`^[ \t]*[0-9]+(\.[0-9]+)?[ \t]*$`)

func FuzzRequestDeadline(f *testing.F) {
	for _, s := range []string{"2", "0.001", "3600", "abc", "-1", "0", "99999", "1.0000000019", " 7 ", "3600.0000000001"} {
		f.Add(s)
	}
	const forward = 5 * time.Second
	f.Fuzz(func(t *testing.T, v string) {
		h := http.Header{"Request-Timeout": {v}}
		dl, err := RequestDeadline(arrival, h, forward)
		if err != nil {
			if !errors.Is(err, ErrRequestTimeout) {
				t.Fatalf("%q: unexpected error %v", v, err)
			}
			if timeoutSyntax.MatchString(v) {
				f, _ := strconv.ParseFloat(strings.Trim(v, " \t"), 64)
				if f >= 0.0011 && f <= 3599.9 {
					t.Fatalf("%q (%v s) refused", v, f)
				}
			}
			return
		}
		if !timeoutSyntax.MatchString(v) {
			t.Fatalf("%q accepted", v)
		}
		d := dl.Sub(arrival)
		if d < MinRequestTimeout || d > forward {
			t.Fatalf("%q: deadline %s after arrival", v, d)
		}
		f, _ := strconv.ParseFloat(strings.Trim(v, " \t"), 64)
		if want := min(f, forward.Seconds()); math.Abs(d.Seconds()-want) > 1e-6 {
			t.Fatalf("%q: %s, want %v s", v, d, want)
		}
	})
}
