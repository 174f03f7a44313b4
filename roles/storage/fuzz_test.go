package storage

import (
	"encoding/json"
	"errors"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/ronhq/ron/httpx"
)

// wantParseError checks that err is a 400 envelope with one of codes.
func wantParseError(t *testing.T, err error, codes ...string) {
	t.Helper()
	var he *httpx.Error
	if !errors.As(err, &he) || he.Status != http.StatusBadRequest {
		t.Fatalf("error %v (%T), want a 400 *httpx.Error", err, err)
	}
	for _, c := range codes {
		if he.Code == c {
			return
		}
	}
	t.Fatalf("code %q, want one of %v", he.Code, codes)
}

var inventoryQuerySeeds = [][2]string{
	{"", ""}, {helloID, "1"}, {"", "10000"}, {emptyID, "1000"},
	{"xyz", ""}, {"", "0"}, {"", "10001"}, {"", "abc"}, {"", "-1"}, {"", "+5"}, {"", " 5"},
	{"B3:" + helloID[3:], ""}, {helloID[3:], ""}, {helloID + " ", ""}, {"", "99999999999999999999"},
}

func TestParseInventoryQueryMalformed(t *testing.T) {
	for _, c := range inventoryQuerySeeds[4:] {
		if c == [2]string{"", "+5"} { // strconv accepts a sign: +5 is 5
			continue
		}
		_, err := ParseInventoryQuery(c[0], c[1])
		wantParseError(t, err, httpx.CodeBadRequest)
	}
	q, err := ParseInventoryQuery("", "")
	if err != nil || q.Limit != 1000 || q.After != nil {
		t.Fatalf("defaults %+v %v", q, err)
	}
}

func FuzzParseInventoryQuery(f *testing.F) {
	for _, c := range inventoryQuerySeeds {
		f.Add(c[0], c[1])
	}
	f.Fuzz(func(t *testing.T, after, limit string) {
		q, err := ParseInventoryQuery(after, limit)
		if err != nil {
			wantParseError(t, err, httpx.CodeBadRequest)
			return
		}
		if q.Limit < 1 || q.Limit > 10000 || (q.After == nil) != (after == "") {
			t.Fatalf("accepted %+v from %q %q", q, after, limit)
		}
		if q.After != nil && q.After.String() != after {
			t.Fatalf("after %q parsed as %s", after, q.After)
		}
		again, err := ParseInventoryQuery(after, strconv.Itoa(q.Limit))
		if err != nil || again.Limit != q.Limit {
			t.Fatalf("re-validation of %+v: %+v %v", q, again, err)
		}
	})
}

var hasSeeds = []string{
	`{"ids":["` + helloID + `"]}`,
	`{"ids":["` + helloID + `","` + emptyID + `","` + helloID + `"]}`,
	`{"ids":[]}`, `{}`, `{"ids":null}`, `{"ids":"` + helloID + `"}`, `{"ids":["` + helloID + `"],"x":1}`,
	`{"ids":["` + helloID + `"]} {}`, `{"ids":`, `[]`, `null`, ``, `{"ids":["b3:x"]}`, `{"ids":[1]}`,
	`{"ids":["` + strings.ToUpper(helloID) + `"]}`, `{"IDS":["` + helloID + `"]}`,
	`{"ids":["` + strings.Repeat(helloID+`","`, 1000) + helloID + `"]}`,
}

func TestParseHasRequestMalformed(t *testing.T) {
	for _, body := range hasSeeds[2:] {
		if body == `{"IDS":["`+helloID+`"]}` { // encoding/json matches keys case-insensitively
			continue
		}
		_, err := ParseHasRequest([]byte(body))
		wantParseError(t, err, httpx.CodeBadRequest, httpx.CodeMalformed)
	}
	for body, code := range map[string]string{`{"ids":[]}`: httpx.CodeBadRequest, `{"ids":`: httpx.CodeMalformed, `{"ids":["b3:x"]}`: httpx.CodeBadRequest,
		`{"ids":["` + helloID + `"],"x":1}`: httpx.CodeMalformed} {
		_, err := ParseHasRequest([]byte(body))
		wantParseError(t, err, code)
	}
}

func FuzzParseHasRequest(f *testing.F) {
	for _, s := range hasSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		ids, err := ParseHasRequest(body)
		if err != nil {
			wantParseError(t, err, httpx.CodeBadRequest, httpx.CodeMalformed)
			return
		}
		var raw hasRequest
		if err := json.Unmarshal(body, &raw); err != nil || len(raw.IDs) != len(ids) || len(ids) < 1 || len(ids) > 1000 {
			t.Fatalf("accepted %d ids from %q", len(ids), body)
		}
		canon := hasRequest{IDs: make([]string, len(ids))}
		for i, id := range ids {
			if id.String() != raw.IDs[i] {
				t.Fatalf("ids[%d] %q parsed as %s", i, raw.IDs[i], id)
			}
			canon.IDs[i] = id.String()
		}
		b, _ := json.Marshal(canon)
		again, err := ParseHasRequest(b)
		if err != nil || len(again) != len(ids) {
			t.Fatalf("re-validation: %v", err)
		}
	})
}

var writeMetaSeeds = [][2]string{
	{"", ""}, {"text/plain", ""}, {"text/plain; charset=utf-8", "identity"}, {"", " IDENTITY "},
	{"application/x-www-form-urlencoded", ""}, {"application/vnd.ron.manifest+json", ""},
	{"multipart/form-data; boundary=x", ""}, {"MULTIPART/FORM-DATA; boundary=x", ""}, {"", "gzip"}, {"", "br"},
	{"text/plain; charset", ""}, {"a b", ""}, {"text/" + strings.Repeat("a", 251), ""}, {"text/plain\x7f", ""},
	{"text/plain; x=\"é\"", ""}, {"/", ""}, {"text/", ""}, {"", "identity, gzip"},
}

func TestWriteMetaMalformed(t *testing.T) {
	for _, c := range []struct {
		ctype, enc string
		status     int
	}{
		{"multipart/form-data; boundary=x", "", 415}, {"MULTIPART/FORM-DATA; boundary=x", "", 415},
		{"", "gzip", 415}, {"", "br", 415}, {"", "identity, gzip", 415}, {"text/plain", "gzip", 415},
		{"", "gzip,", 415}, {"", ", br", 415}, {"", "identity, identity", 415},
		{"text/plain; charset", "", 400}, {"a b", "", 400}, {"text/" + strings.Repeat("a", 251), "", 400},
		{"text/plain\x7f", "", 400}, {"text/plain; x=\"é\"", "", 400}, {"/", "", 400}, {"text/", "", 400},
	} {
		_, err := writeMeta(header(c.ctype, c.enc))
		if he := httpx.AsError(err); err == nil || he.Status != c.status {
			t.Errorf("writeMeta(%q, %q) = %v, want %d", c.ctype, c.enc, err, c.status)
		}
	}
	for _, enc := range []string{" ", ",", " , ", "identity,", " , IDENTITY"} { // no coding (RFC 9110 §5.6.1)
		if _, err := writeMeta(header("text/plain", enc)); err != nil {
			t.Errorf("Content-Encoding %q: %v", enc, err)
		}
	}
	m, err := writeMeta(header("application/x-www-form-urlencoded", ""))
	if err != nil || m.ContentType != "" {
		t.Fatalf("form-urlencoded: %+v %v", m, err)
	}
}

func header(ctype, enc string) http.Header {
	h := http.Header{}
	if ctype != "" {
		h.Set("Content-Type", ctype)
	}
	if enc != "" {
		h.Set("Content-Encoding", enc)
	}
	return h
}

func FuzzWriteMeta(f *testing.F) {
	for _, c := range writeMetaSeeds {
		f.Add(c[0], c[1])
	}
	f.Fuzz(func(t *testing.T, ctype, enc string) {
		meta, err := writeMeta(header(ctype, enc))
		if err != nil {
			if he := httpx.AsError(err); he.Status != 400 && he.Status != 415 {
				t.Fatalf("writeMeta(%q, %q) = %v", ctype, enc, err)
			}
			return
		}
		// RFC 9110 §5.6.1: empty list elements do not count; accepted means
		// no coding at all, or just "identity".
		var codings []string
		for _, el := range strings.Split(enc, ",") {
			if el = strings.TrimSpace(el); el != "" {
				codings = append(codings, strings.ToLower(el))
			}
		}
		if len(codings) > 1 || len(codings) == 1 && codings[0] != "identity" {
			t.Fatalf("accepted Content-Encoding %q", enc)
		}
		if meta.ContentType == "" {
			return
		}
		mt, _, perr := mime.ParseMediaType(meta.ContentType)
		if meta.ContentType != ctype || meta.Validate() != nil || perr != nil || mt == "multipart/form-data" {
			t.Fatalf("accepted Content-Type %q as %+v", ctype, meta)
		}
		again, err := writeMeta(header(meta.ContentType, ""))
		if err != nil || again != meta {
			t.Fatalf("re-validation of %q: %+v %v", meta.ContentType, again, err)
		}
	})
}
