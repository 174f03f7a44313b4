package httpapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/ronhq/ron/httpx/content"
	"github.com/ronhq/ron/roles/registry/registryapi"
	"github.com/ronhq/ron/roles/registry/registryapi/descriptor"
)

func TestHeadETagAnd304(t *testing.T) {
	run(t, func(t *testing.T, e *env) {
		resp, body := e.request(http.MethodGet, "/registry/head", nil)
		h := e.c.Head()
		wantTag := fmt.Sprintf(`"0-%s"`, strings.TrimPrefix(h.PayloadB3, "b3:")[:16])
		if resp.StatusCode != 200 || resp.Header.Get("ETag") != wantTag || resp.Header.Get("Cache-Control") != "no-cache" {
			t.Fatalf("head: %d etag %q cc %q", resp.StatusCode, resp.Header.Get("ETag"), resp.Header.Get("Cache-Control"))
		}
		var got registryapi.Head
		if err := json.Unmarshal(body, &got); err != nil || got != (registryapi.Head{Version: 0, PayloadB3: h.PayloadB3, CommittedAt: h.CommittedAt}) {
			t.Fatalf("body %s (%v)", body, err)
		}
		resp, body = e.request(http.MethodGet, "/registry/head", nil, "If-None-Match", wantTag)
		if resp.StatusCode != http.StatusNotModified || len(body) != 0 || resp.Header.Get("ETag") != wantTag {
			t.Fatalf("conditional: %d %q", resp.StatusCode, body)
		}
		resp, body = e.request(http.MethodHead, "/registry/head", nil)
		if resp.StatusCode != 200 || len(body) != 0 || resp.Header.Get("ETag") != wantTag {
			t.Fatalf("HEAD: %d %q", resp.StatusCode, body)
		}
		e.cycle("one")
		resp, _ = e.request(http.MethodGet, "/registry/head", nil, "If-None-Match", wantTag)
		if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("ETag"), `"1-`) {
			t.Fatalf("after commit: %d %q", resp.StatusCode, resp.Header.Get("ETag"))
		}
	})
}

func TestGetVersion(t *testing.T) {
	run(t, func(t *testing.T, e *env) {
		e.commitN(3)
		for v := range uint64(4) {
			resp, body := e.request(http.MethodGet, fmt.Sprint("/registry/", v), nil)
			rec, err := e.log.Read(v)
			if err != nil {
				t.Fatal(err)
			}
			tag := `"` + descriptor.PayloadB3(body) + `"`
			if resp.StatusCode != 200 || !bytes.Equal(body, rec.Artifact) || resp.Header.Get("ETag") != tag ||
				resp.Header.Get("Cache-Control") != content.Immutable {
				t.Fatalf("v%d: %d etag %q cc %q", v, resp.StatusCode, resp.Header.Get("ETag"), resp.Header.Get("Cache-Control"))
			}
			resp, _ = e.request(http.MethodGet, fmt.Sprint("/registry/", v), nil, "If-None-Match", tag)
			if resp.StatusCode != http.StatusNotModified {
				t.Fatalf("v%d conditional: %d", v, resp.StatusCode)
			}
		}
		e.minIdx.Store(2)
		cases := []struct {
			path string
			w    want
		}{
			{"/registry/4", want{404, "not_found", nil, 0}},
			{"/registry/1", want{410, "gone", map[string]any{"reason": "pruned"}, 0}},
			{"/registry/01", want{400, "bad_request", map[string]any{"reason": "version"}, 0}},
			{"/registry/-1", want{400, "bad_request", nil, 0}},
			{"/registry/+2", want{400, "bad_request", nil, 0}},
			{"/registry/2a", want{400, "bad_request", nil, 0}},
			{"/registry/18446744073709551616", want{400, "bad_request", nil, 0}},
			{"/registry/99999999999999999999", want{400, "bad_request", nil, 0}},
		}
		for _, c := range cases {
			resp, body := e.request(http.MethodGet, c.path, nil)
			checkResp(t, c.path, resp, body, c.w)
		}
		if resp, _ := e.request(http.MethodGet, "/registry/2", nil); resp.StatusCode != 200 {
			t.Fatalf("min_index itself: %d", resp.StatusCode)
		}
	})
}

func TestProposalReadsAndStatus(t *testing.T) {
	run(t, func(t *testing.T, e *env) {
		rawA, b3A := e.nextPayload("a")
		rawB, b3B := e.nextPayload("b")
		for _, raw := range [][]byte{rawA, rawB} {
			if resp, body := e.post("/registry/proposals", proposeBody(raw), registryapi.ScopePropose); resp.StatusCode != 202 {
				t.Fatalf("propose: %d %s", resp.StatusCode, body)
			}
		}
		resp, body := e.request(http.MethodGet, "/registry/proposals", nil)
		var list registryapi.ProposalList
		if err := json.Unmarshal(body, &list); err != nil || resp.StatusCode != 200 || len(list.Proposals) != 2 ||
			list.Proposals[0].PayloadB3 != b3A || list.Proposals[1].PayloadB3 != b3B {
			t.Fatalf("list: %d %s", resp.StatusCode, body)
		}
		id := descriptor.ProposalID(b3A)
		resp, body = e.request(http.MethodGet, "/registry/proposals/"+id, nil)
		var p registryapi.Proposal
		if err := json.Unmarshal(body, &p); err != nil || resp.StatusCode != 200 || p.Status != "pending" ||
			p.Quorum != (registryapi.Quorum{M: 2, N: 3}) || p.CommittedVersion != nil {
			t.Fatalf("proposal: %d %s", resp.StatusCode, body)
		}
		head, _ := e.a.doHead()
		e.status = registryapi.Status{Head: head, ReadReady: true, Signers: []string{signerID(1)}}
		resp, body = e.request(http.MethodGet, "/registry/status", nil)
		var st registryapi.Status
		if err := json.Unmarshal(body, &st); err != nil || resp.StatusCode != 200 ||
			resp.Header.Get("Cache-Control") != "no-store" || !st.ReadReady || st.Head.Version != 0 {
			t.Fatalf("status: %d %s", resp.StatusCode, body)
		}
		for _, k := range []string{`"write_unready_reasons"`, `"checkpoint":{"size"`, `"verifier":{"verified_through":null`, `"min_index"`, `"open_proposals"`, `"dev_signer"`, `"amnesia"`} {
			if !bytes.Contains(body, []byte(k)) {
				t.Fatalf("status body lacks %s: %s", k, body)
			}
		}
	})
}

func TestPrivateReads(t *testing.T) {
	run(t, func(t *testing.T, e *env) {
		e.update(func(s *Settings) { s.PublicReads = false })
		for _, path := range []string{"/registry/head", "/registry/0", "/registry/proposals", "/registry/status",
			"/registry/log/checkpoint", "/registry/log/key", "/registry/log/tile/0/000.p/1", "/registry/stream"} {
			resp, body := e.request(http.MethodGet, path, nil)
			checkResp(t, path, resp, body, want{401, "unauthorized", nil, 0})
			resp, body = e.request(http.MethodGet, path, nil, "Authorization", "Bearer "+e.token(registryapi.ScopePropose))
			checkResp(t, path, resp, body, want{403, "forbidden", nil, 0})
			if path == "/registry/stream" {
				continue
			}
			resp, _ = e.request(http.MethodGet, path, nil, "Authorization", "Bearer "+e.token(registryapi.ScopeRead))
			if resp.StatusCode != 200 {
				t.Fatalf("%s with registry:read: %d", path, resp.StatusCode)
			}
		}
	})
}
