package httpcache

import (
	"net/http"
	"testing"
	"time"
)

func TestParseHTTPDate(t *testing.T) {
	want := time.Date(1994, time.November, 6, 8, 49, 37, 0, time.UTC)
	y2050 := time.Date(2050, time.August, 18, 2, 1, 18, 0, time.UTC)
	tests := []struct {
		name string
		in   string
		ok   bool
		want time.Time
	}{
		{"RFC9110 5.6.7 IMF-fixdate", "Sun, 06 Nov 1994 08:49:37 GMT", true, want},
		{"RFC9110 5.6.7 RFC 850", "Sunday, 06-Nov-94 08:49:37 GMT", true, want},
		{"RFC9110 5.6.7 asctime", "Sun Nov  6 08:49:37 1994", true, want},
		{"RFC9110 5.6.7 asctime two-digit day", "Sun Nov 06 08:49:37 1994", true, want},
		{"RFC9110 5.6.7 weekday case-insensitive", "THU, 18 Aug 2050 02:01:18 GMT", true, y2050},
		{"RFC9110 5.6.7 month case-insensitive", "Thu, 18 AUG 2050 02:01:18 GMT", true, y2050},
		{"RFC9110 5.6.7 GMT case-insensitive", "Thu, 18 Aug 2050 02:01:18 gMT", true, y2050},
		{"RFC9110 5.6.7 surrounding OWS", " Sun, 06 Nov 1994 08:49:37 GMT\t", true, want},
		{"RFC9110 5.6.7 RFC 850 year 2049", "Thursday, 18-Aug-49 02:01:18 GMT", true, time.Date(2049, time.August, 18, 2, 1, 18, 0, time.UTC)},
		{"RFC9110 5.6.7 leap day", "Thu, 29 Feb 2024 00:00:00 GMT", true, time.Date(2024, time.February, 29, 0, 0, 0, 0, time.UTC)},
		{"RFC9110 5.6.7 UTC zone invalid", "Thu, 18 Aug 2050 02:01:18 UTC", false, time.Time{}},
		{"RFC9110 5.6.7 two-digit IMF year invalid", "Thu, 18 Aug 50 02:01:18 GMT", false, time.Time{}},
		{"RFC9110 5.6.7 missing comma invalid", "Thu 18 Aug 2050 02:01:18 GMT", false, time.Time{}},
		{"RFC9110 5.6.7 multiple spaces invalid", "Thu, 18  Aug  2050 02:01:18 GMT", false, time.Time{}},
		{"RFC9110 5.6.7 dashed IMF date invalid", "Thu, 18-Aug-2050 02:01:18 GMT", false, time.Time{}},
		{"RFC9110 5.6.7 dotted time invalid", "Thu, 18 Aug 2050 02.01.18 GMT", false, time.Time{}},
		{"RFC9110 5.6.7 one-digit hour invalid", "Thu, 18 Aug 2050 2:01:18 GMT", false, time.Time{}},
		{"RFC9110 5.6.7 zero invalid", "0", false, time.Time{}},
		{"RFC9110 5.6.7 empty invalid", "", false, time.Time{}},
		{"RFC9110 5.6.7 bad weekday invalid", "Xyz, 06 Nov 1994 08:49:37 GMT", false, time.Time{}},
		{"RFC9110 5.6.7 bad month invalid", "Sun, 06 Nox 1994 08:49:37 GMT", false, time.Time{}},
		{"RFC9110 5.6.7 day 31 in November invalid", "Sun, 31 Nov 1994 08:49:37 GMT", false, time.Time{}},
		{"RFC9110 5.6.7 day 0 invalid", "Sun, 00 Nov 1994 08:49:37 GMT", false, time.Time{}},
		{"RFC9110 5.6.7 hour 24 invalid", "Sun, 06 Nov 1994 24:49:37 GMT", false, time.Time{}},
		{"RFC9110 5.6.7 RFC 850 short weekday invalid", "Sun, 06-Nov-94 08:49:37 GMT", false, time.Time{}},
		{"RFC9110 5.6.7 RFC 850 four-digit year invalid", "Sunday, 06-Nov-1994 08:49:37 GMT", false, time.Time{}},
		{"RFC9110 5.6.7 asctime one-digit day no pad invalid", "Sun Nov 6 08:49:37 1994", false, time.Time{}},
		{"RFC9110 5.6.7 asctime trailing GMT invalid", "Sun Nov  6 08:49:37 1994 GMT", false, time.Time{}},
		{"RFC9110 5.6.7 sign in year invalid", "Sun, 06 Nov -994 08:49:37 GMT", false, time.Time{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := ParseHTTPDate(tc.in)
			if ok != tc.ok || !got.Equal(tc.want) {
				t.Errorf("ParseHTTPDate(%q) = %v, %v; want %v, %v", tc.in, got, ok, tc.want, tc.ok)
			}
		})
	}
}

func TestFormatHTTPDateRoundTrip(t *testing.T) {
	got, ok := ParseHTTPDate(FormatHTTPDate(t0.In(time.FixedZone("x", 3600))))
	if !ok || !got.Equal(t0) {
		t.Fatalf("round trip: %v %v", got, ok)
	}
}

func TestParseAge(t *testing.T) {
	tests := []struct {
		name  string
		lines []string
		want  time.Duration
		ok    bool
	}{
		{"RFC9111 5.1 digits", []string{"15"}, 15 * time.Second, true},
		{"RFC9111 5.1 absent", nil, 0, false},
		{"RFC9111 5.1 non-numeric ignored", []string{"abc"}, 0, false},
		{"RFC9111 5.1 negative ignored", []string{"-7200"}, 0, false},
		{"RFC9111 5.1 float ignored", []string{"7200.0"}, 0, false},
		{"RFC9111 5.1 list first member", []string{"7200,0"}, 7200 * time.Second, true},
		{"RFC9111 5.1 list first member zero", []string{"0,7200"}, 0, true},
		{"RFC9111 5.1 list with OWS", []string{" 7200 , 7200"}, 7200 * time.Second, true},
		{"RFC9111 5.1 first line wins", []string{"0", "7200"}, 0, true},
		{"RFC9111 5.1 first line wins old", []string{"7200", "0"}, 7200 * time.Second, true},
		{"RFC9111 1.2.2 saturates", []string{"99999999999"}, MaxDeltaSeconds * time.Second, true},
		{"RFC9111 5.1 empty ignored", []string{""}, 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := http.Header{"Age": tc.lines}
			if tc.lines == nil {
				h = http.Header{}
			}
			got, ok := ParseAge(h)
			if got != tc.want || ok != tc.ok {
				t.Errorf("ParseAge = %v, %v; want %v, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}

func TestParseExpiresDateLastModified(t *testing.T) {
	valid := httpDate(10)
	tests := []struct {
		name           string
		lines          []string
		present, valid bool
	}{
		{"RFC9111 5.3 valid", []string{valid}, true, true},
		{"RFC9111 5.3 absent", nil, false, false},
		{"RFC9111 5.3 invalid means expired", []string{"0"}, true, false},
		{"RFC9111 5.3 several lines means expired", []string{valid, valid}, true, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := http.Header{}
			for _, l := range tc.lines {
				h.Add("Expires", l)
				h.Add("Date", l)
				h.Add("Last-Modified", l)
			}
			_, present, ok := ParseExpires(h)
			if present != tc.present || ok != tc.valid {
				t.Errorf("ParseExpires present %v valid %v; want %v %v", present, ok, tc.present, tc.valid)
			}
			if _, ok := LastModified(h); ok != tc.valid {
				t.Errorf("LastModified ok %v, want %v", ok, tc.valid)
			}
			wantDate := at(-99)
			if tc.valid {
				wantDate = at(10)
			}
			if got := DateValue(h, at(-99)); !got.Equal(wantDate) {
				t.Errorf("DateValue = %v, want %v (RFC9110 6.6.1 invalid Date → response time)", got, wantDate)
			}
		})
	}
}

func TestParseETag(t *testing.T) {
	tests := []struct {
		name string
		in   string
		ok   bool
		want ETag
	}{
		{"RFC9110 8.8.3 strong", `"abc"`, true, ETag{Opaque: "abc"}},
		{"RFC9110 8.8.3 weak", `W/"abc"`, true, ETag{Weak: true, Opaque: "abc"}},
		{"RFC9110 8.8.3 empty opaque", `""`, true, ETag{}},
		{"RFC9110 8.8.3 obs-text", "\"abcdef\xc3\xbc\"", true, ETag{Opaque: "abcdef\xc3\xbc"}},
		{"RFC9110 8.8.3 surrounding OWS", ` "a" `, true, ETag{Opaque: "a"}},
		{"RFC9110 8.8.3 unquoted invalid", `abc`, false, ETag{}},
		{"RFC9110 8.8.3 lower-case weak invalid", `w/"abc"`, false, ETag{}},
		{"RFC9110 8.8.3 backslash weak invalid", `W\"abc"`, false, ETag{}},
		{"RFC9110 8.8.3 missing slash invalid", `W"abc"`, false, ETag{}},
		{"RFC9110 8.8.3 inner quote invalid", `"a"b"`, false, ETag{}},
		{"RFC9110 8.8.3 space inside invalid", `"a b"`, false, ETag{}},
		{"RFC9110 8.8.3 trailing junk invalid", `"ab"c`, false, ETag{}},
		{"RFC9110 8.8.3 lone quote invalid", `"`, false, ETag{}},
		{"RFC9110 8.8.3 DEL invalid", "\"a\x7f\"", false, ETag{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := ParseETag(tc.in)
			if ok != tc.ok || got != tc.want {
				t.Errorf("ParseETag(%q) = %+v, %v; want %+v, %v", tc.in, got, ok, tc.want, tc.ok)
			}
			if ok {
				if back, ok2 := ParseETag(got.String()); !ok2 || back != got {
					t.Errorf("String round trip %q", got.String())
				}
			}
		})
	}
}

func TestValidatorsOf(t *testing.T) {
	lm := httpDate(-100)
	tests := []struct {
		name                 string
		h                    []string
		hasETag, invalid, lm bool
	}{
		{"RFC9110 8.8 strong ETag", []string{"ETag", `"a"`}, true, false, false},
		{"spec 13 unquoted ETag unusable", []string{"ETag", `abc`}, false, true, false},
		{"RFC9110 8.8 two ETag lines unusable", []string{"ETag", `"a"`, "ETag", `"b"`}, false, true, false},
		{"RFC9110 8.8.2 Last-Modified", []string{"Last-Modified", lm}, false, false, true},
		{"RFC9110 8.8.2 bad Last-Modified unusable", []string{"Last-Modified", "yesterday"}, false, false, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := ValidatorsOf(hdr(tc.h...))
			if v.HasETag != tc.hasETag || v.ETagInvalid != tc.invalid || v.HasLastModified != tc.lm {
				t.Errorf("got %+v", v)
			}
			if v.Any() != (tc.hasETag || tc.lm) {
				t.Errorf("Any = %v", v.Any())
			}
		})
	}
	if !(ETag{Opaque: "a"}).StrongEqual(ETag{Opaque: "a"}) || (ETag{Weak: true, Opaque: "a"}).StrongEqual(ETag{Weak: true, Opaque: "a"}) {
		t.Error("RFC9110 8.8.3.2 strong comparison")
	}
	if !(ETag{Weak: true, Opaque: "a"}).WeakEqual(ETag{Opaque: "a"}) || (ETag{Opaque: "a"}).WeakEqual(ETag{Opaque: "b"}) {
		t.Error("RFC9110 8.8.3.2 weak comparison")
	}
}
