package ranges

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

var (
	lastMod   = time.Date(2026, 3, 1, 12, 0, 0, 500e6, time.UTC) // sub-second part: dates compare at seconds
	lmText    = "Sun, 01 Mar 2026 12:00:00 GMT"
	earlier   = "Sun, 01 Mar 2026 11:59:59 GMT"
	later     = "Sun, 01 Mar 2026 12:00:01 GMT"
	dateTagV  = Validators{ETag: `"v1"`, LastModified: lastMod, StrongDate: true}
	noDateTag = Validators{ETag: `"v1"`}
)

func TestCheckConditionsDates(t *testing.T) {
	rows := []struct {
		name   string
		method string
		v      Validators
		hdr    [][2]string
		want   int
	}{
		{"IMS equal → 304", "GET", dateTagV, [][2]string{{"If-Modified-Since", lmText}}, 304},
		{"IMS later → 304", "HEAD", dateTagV, [][2]string{{"If-Modified-Since", later}}, 304},
		{"IMS earlier → proceed", "GET", dateTagV, [][2]string{{"If-Modified-Since", earlier}}, 0},
		{"IMS ignored for POST", "POST", dateTagV, [][2]string{{"If-Modified-Since", later}}, 0},
		{"IMS ignored without Last-Modified", "GET", noDateTag, [][2]string{{"If-Modified-Since", later}}, 0},
		{"IMS invalid date ignored", "GET", dateTagV, [][2]string{{"If-Modified-Since", "yesterday"}}, 0},
		{"IMS two lines ignored", "GET", dateTagV, [][2]string{{"If-Modified-Since", later}, {"If-Modified-Since", later}}, 0},
		{"IMS ignored when If-None-Match present and not matching", "GET", dateTagV,
			[][2]string{{"If-None-Match", `"v0"`}, {"If-Modified-Since", later}}, 0},
		{"INM match wins", "GET", dateTagV, [][2]string{{"If-None-Match", `W/"v1"`}, {"If-Modified-Since", earlier}}, 304},
		{"IUS earlier → 412", "GET", dateTagV, [][2]string{{"If-Unmodified-Since", earlier}}, 412},
		{"IUS equal → proceed", "GET", dateTagV, [][2]string{{"If-Unmodified-Since", lmText}}, 0},
		{"IUS ignored when If-Match present", "GET", dateTagV,
			[][2]string{{"If-Match", `"v1"`}, {"If-Unmodified-Since", earlier}}, 0},
		{"IUS ignored without Last-Modified", "GET", noDateTag, [][2]string{{"If-Unmodified-Since", earlier}}, 0},
		{"If-Match fails first", "GET", dateTagV, [][2]string{{"If-Match", `"v0"`}, {"If-None-Match", `"v1"`}}, 412},
		{"INM match on PUT → 412", "PUT", dateTagV, [][2]string{{"If-None-Match", `*`}}, 412},
		{"RFC 850 date", "GET", dateTagV, [][2]string{{"If-Modified-Since", "Sunday, 01-Mar-26 12:00:00 GMT"}}, 304},
		{"asctime date", "GET", dateTagV, [][2]string{{"If-Modified-Since", "Sun Mar  1 12:00:00 2026"}}, 304},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			r := httptest.NewRequest(row.method, "/x", nil)
			for _, h := range row.hdr {
				r.Header.Add(h[0], h[1])
			}
			if got := CheckConditions(r, row.v); got != row.want {
				t.Fatalf("CheckConditions = %d, want %d", got, row.want)
			}
		})
	}
}

func TestIfRangeDates(t *testing.T) {
	rows := []struct {
		name    string
		v       Validators
		ifRange string
		want    int
	}{
		{"equal date, strong", dateTagV, lmText, 206},
		{"equal date, weak Last-Modified", Validators{ETag: `"v1"`, LastModified: lastMod}, lmText, 200},
		{"later date", dateTagV, later, 200},
		{"date without Last-Modified", noDateTag, lmText, 200},
		{"bad date", dateTagV, "not a date", 200},
		{"strong tag still works", dateTagV, `"v1"`, 206},
		{"weak tag", dateTagV, `W/"v1"`, 200},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/x", nil)
			r.Header.Set("Range", "bytes=0-9")
			r.Header.Set("If-Range", row.ifRange)
			if got := NewPlanFor(r, 100, row.v, "", 16).Status; got != row.want {
				t.Fatalf("status %d, want %d", got, row.want)
			}
		})
	}
}

// TestDatesAgreeWithServeContent diffs statuses against net/http.ServeContent
// with a modification time, where If-Range dates count only because the
// validators here say the date is strong (ServeContent does not check).
func TestDatesAgreeWithServeContent(t *testing.T) {
	body := testBody(1000)
	dates := []string{"", lmText, earlier, later, "garbage"}
	fields := []string{"If-Modified-Since", "If-Unmodified-Since", "If-Range"}
	tags := [][2]string{{}, {"If-None-Match", `"v1"`}, {"If-None-Match", `"v0"`}, {"If-Match", `"v1"`}, {"If-Match", `"v0"`}}
	for _, f := range fields {
		for _, d := range dates {
			for _, tag := range tags {
				for _, method := range []string{"GET", "HEAD"} {
					hdr := http.Header{"Range": {"bytes=0-9"}}
					if d != "" {
						hdr.Set(f, d)
					}
					if tag[0] != "" {
						hdr.Set(tag[0], tag[1])
					}
					mine, theirs := bothWithDates(body, method, hdr)
					if mine != theirs {
						t.Errorf("%s %s=%q %v: ours %d, ServeContent %d", method, f, d, tag, mine, theirs)
					}
				}
			}
		}
	}
}

// bothWithDates answers one request with NewPlanFor and with ServeContent.
func bothWithDates(body []byte, method string, hdr http.Header) (mine, theirs int) {
	req := func() *http.Request {
		r := httptest.NewRequest(method, "/x", nil)
		r.Header = hdr.Clone()
		return r
	}
	mine = NewPlanFor(req(), int64(len(body)), dateTagV, "", 16).Status
	rec := httptest.NewRecorder()
	rec.Header().Set("ETag", dateTagV.ETag)
	http.ServeContent(rec, req(), "", lastMod, bytes.NewReader(body))
	theirs = rec.Code
	if method == "HEAD" && theirs == 206 {
		theirs = 200 // deliberate difference: HEAD ignores Range (RFC 9110 §14.2)
	}
	return mine, theirs
}
