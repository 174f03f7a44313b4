package httpapi

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/ronhq/ron/roles/registry/registryapi"
	"github.com/ronhq/ron/roles/registry/registryapi/descriptor"
)

func TestWriteResponses(t *testing.T) {
	run(t, func(t *testing.T, e *env) {
		raw, b3 := e.nextPayload("w")
		id := descriptor.ProposalID(b3)
		resp, body := e.post("/registry/proposals", proposeBody(raw), registryapi.ScopePropose)
		if resp.StatusCode != 202 || resp.Header.Get("Location") != "/registry/proposals/"+id ||
			resp.Header.Get("Cache-Control") != "no-store" {
			t.Fatalf("propose: %d %v %s", resp.StatusCode, resp.Header, body)
		}
		resp2, body2 := e.post("/registry/proposals", proposeBody(raw), registryapi.ScopePropose)
		if resp2.StatusCode != 202 || !bytes.Equal(body, body2) {
			t.Fatalf("re-propose: %d %s, first %s", resp2.StatusCode, body2, body)
		}
		for _, k := range []byte{1, 2} {
			ab, _ := json.Marshal(sign(k, b3))
			resp, body = e.post("/registry/approvals/"+id, ab, registryapi.ScopeApprove)
			if resp.StatusCode != 200 || resp.Header.Get("Cache-Control") != "no-store" {
				t.Fatalf("approve: %d %s", resp.StatusCode, body)
			}
		}
		for i, b := range [][]byte{nil, []byte(" { } ")} {
			hdr := []string{"Authorization", "Bearer " + e.token(registryapi.ScopeCommit), "X-Corr-ID", "commit-corr"}
			if b != nil {
				hdr = append(hdr, "Content-Type", "application/json")
			}
			resp, body = e.request(http.MethodPost, "/registry/commit/"+id, b, hdr...)
			if resp.StatusCode != 201 || resp.Header.Get("Location") != "/registry/1" ||
				resp.Header.Get("Cache-Control") != "no-store" {
				t.Fatalf("commit %d: %d %v %s", i, resp.StatusCode, resp.Header, body)
			}
		}
		if rec, err := e.log.Read(1); err != nil || rec.CorrID != "commit-corr" {
			t.Fatalf("log record corr id %q (%v)", rec.CorrID, err)
		}
	})
}

// gz compresses b.
func gz(b []byte) []byte {
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	_, _ = w.Write(b)
	_ = w.Close()
	return buf.Bytes()
}

// badInput is one HTTP request that must be refused.
type badInput struct {
	name   string
	method string
	path   func(e *env) string
	body   func(e *env) []byte
	hdr    func(e *env) []string
	w      want
}

func fixed(s string) func(*env) string { return func(*env) string { return s } }

func bodyOf(b string) func(*env) []byte { return func(*env) []byte { return []byte(b) } }

// withScope is the JSON headers with a token of scope.
func withScope(scope string, more ...string) func(e *env) []string {
	return func(e *env) []string {
		return append([]string{"Content-Type", "application/json", "Authorization", "Bearer " + e.token(scope)}, more...)
	}
}

// validPropose is a valid propose body for the env's HEAD.
func validPropose(e *env) []byte {
	raw, _ := e.nextPayload("bad-input")
	return proposeBody(raw)
}

// openID is the id of a fresh open proposal.
func openID(e *env) string {
	return "/registry/approvals/" + descriptor.ProposalID(e.proposed("open").B3)
}

var badInputs = []badInput{
	{"propose no token", "POST", fixed("/registry/proposals"), validPropose,
		func(*env) []string { return []string{"Content-Type", "application/json"} }, want{401, "unauthorized", nil, 0}},
	{"propose bad token", "POST", fixed("/registry/proposals"), validPropose,
		func(*env) []string {
			return []string{"Content-Type", "application/json", "Authorization", "Bearer junk"}
		},
		want{401, "unauthorized", nil, 0}},
	{"propose wrong scope", "POST", fixed("/registry/proposals"), validPropose, withScope(registryapi.ScopeApprove),
		want{403, "forbidden", nil, 0}},
	{"approve wrong scope", "POST", openID, bodyOf("{}"), withScope(registryapi.ScopeCommit), want{403, "forbidden", nil, 0}},
	{"commit wrong scope", "POST", fixed("/registry/commit/p_00000000000000000000000000000000"), nil,
		withScope(registryapi.ScopePropose), want{403, "forbidden", nil, 0}},
	{"propose text/plain", "POST", fixed("/registry/proposals"), validPropose,
		func(e *env) []string {
			return []string{"Content-Type", "text/plain", "Authorization", "Bearer " + e.token(registryapi.ScopePropose)}
		}, want{415, "unsupported_media_type", nil, 0}},
	{"approve no content type", "POST", openID, bodyOf("{}"),
		func(e *env) []string { return []string{"Authorization", "Bearer " + e.token(registryapi.ScopeApprove)} },
		want{415, "unsupported_media_type", nil, 0}},
	{"commit text body", "POST", fixed("/registry/commit/p_00000000000000000000000000000000"), bodyOf("x"),
		func(e *env) []string {
			return []string{"Content-Type", "text/plain", "Authorization", "Bearer " + e.token(registryapi.ScopeCommit)}
		}, want{415, "unsupported_media_type", nil, 0}},
	{"commit non-empty object", "POST", fixed("/registry/commit/p_00000000000000000000000000000000"),
		bodyOf(`{"a":1}`), withScope(registryapi.ScopeCommit), want{400, "malformed", nil, 0}},
	{"commit array", "POST", fixed("/registry/commit/p_00000000000000000000000000000000"),
		bodyOf(`[]`), withScope(registryapi.ScopeCommit), want{400, "malformed", nil, 0}},
	{"propose over 1 MiB", "POST", fixed("/registry/proposals"),
		func(*env) []byte { return bytes.Repeat([]byte(" "), 1<<20+1) }, withScope(registryapi.ScopePropose),
		want{413, "payload_too_large", nil, 0}},
	{"propose gzip bomb", "POST", fixed("/registry/proposals"),
		func(*env) []byte { return gz(bytes.Repeat([]byte(" "), 4<<20)) }, withScope(registryapi.ScopePropose, "Content-Encoding", "gzip"),
		want{413, "decoded_cap", nil, 0}},
	{"propose invalid utf-8", "POST", fixed("/registry/proposals"), bodyOf("{\"schema_version\":\"\xff\"}"),
		withScope(registryapi.ScopePropose), want{400, "malformed", nil, 0}},
	{"propose trailing data", "POST", fixed("/registry/proposals"),
		func(e *env) []byte { return append(validPropose(e), []byte(" {}")...) }, withScope(registryapi.ScopePropose),
		want{400, "malformed", nil, 0}},
	{"propose lone surrogate", "POST", fixed("/registry/proposals"), bodyOf(`{"schema_version":"\ud800"}`),
		withScope(registryapi.ScopePropose), want{400, "malformed", nil, 0}},
	{"propose wrong type", "POST", fixed("/registry/proposals"), bodyOf(`{"schema_version":1,"payload":{}}`),
		withScope(registryapi.ScopePropose), want{400, "malformed", map[string]any{"reason": "wrong_type"}, 0}},
	{"propose empty body", "POST", fixed("/registry/proposals"), nil, withScope(registryapi.ScopePropose),
		want{400, "malformed", nil, 0}},
	{"propose integer range", "POST", fixed("/registry/proposals"), func(e *env) []byte {
		raw, _ := e.nextPayload("x")
		raw = []byte(strings.Replace(string(raw), `"m":2`, `"m":9007199254740992`, 1))
		return proposeBody(raw)
	}, withScope(registryapi.ScopePropose), want{400, "bad_request", map[string]any{"reason": "integer_range"}, 0}},
	{"approve bad id", "POST", fixed("/registry/approvals/p_ABC"), bodyOf("{}"), withScope(registryapi.ScopeApprove),
		want{400, "bad_request", map[string]any{"reason": "proposal_id"}, 0}},
	{"approve missing member", "POST", openID, bodyOf(`{"signer_id":"org:test#k1"}`), withScope(registryapi.ScopeApprove),
		want{400, "malformed", map[string]any{"reason": "missing_field"}, 0}},
	{"get proposal bad id", "GET", fixed("/registry/proposals/p_1"), nil, nil,
		want{400, "bad_request", map[string]any{"reason": "proposal_id"}, 0}},
	{"approve is POST only", "GET", fixed("/registry/approvals/p_1"), nil, nil, want{404, "not_found", nil, 0}},
	{"stream is GET only", "POST", fixed("/registry/stream"), nil, nil, want{405, "method_not_allowed", nil, 0}},
}

func TestBadInputs(t *testing.T) {
	run(t, func(t *testing.T, e *env) {
		for _, c := range badInputs {
			var body []byte
			if c.body != nil {
				body = c.body(e)
			}
			var hdr []string
			if c.hdr != nil {
				hdr = c.hdr(e)
			}
			resp, rb := e.request(c.method, c.path(e), body, hdr...)
			checkResp(t, c.name, resp, rb, c.w)
		}
		if got := e.metric("registry_audit_events_total", "event", "propose.rejected"); got == 0 {
			t.Fatal("handler-side rejections are not audited")
		}
	})
}

func TestGzipBodyAccepted(t *testing.T) {
	run(t, func(t *testing.T, e *env) {
		resp, body := e.request(http.MethodPost, "/registry/proposals", gz(validPropose(e)),
			withScope(registryapi.ScopePropose, "Content-Encoding", "gzip")(e)...)
		if resp.StatusCode != 202 {
			t.Fatalf("gzip propose: %d %s", resp.StatusCode, body)
		}
	})
}
