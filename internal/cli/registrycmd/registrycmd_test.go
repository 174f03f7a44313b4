package registrycmd

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ronhq/ron/httpx/auth"
	"github.com/ronhq/ron/internal/cli"
	"github.com/ronhq/ron/internal/cli/clitest"
	"github.com/ronhq/ron/internal/fixtures"
	"github.com/ronhq/ron/roles/registry/registryapi"
	"github.com/ronhq/ron/roles/registry/registryapi/descriptor"
	"github.com/ronhq/ron/roles/registry/registrytest"
	"github.com/ronhq/ron/roles/registry/regstore"
)

// cliRun is the outcome of one in-process command line.
type cliRun struct{ clitest.Run }

// runCLI executes `ron args…` with the registry commands mounted, mapping
// the error to an exit code as main does.
func runCLI(t *testing.T, env cli.Env, token string, args ...string) cliRun {
	t.Helper()
	return cliRun{clitest.Execute(Commands(env, clitest.TokenEnv(token)), args...)}
}

// want checks the exit code and that stdout holds every wanted fragment.
func (r cliRun) want(t *testing.T, code int, stdout ...string) cliRun {
	t.Helper()
	if r.Code != code {
		t.Fatalf("exit %d, want %d (err %v)\nstdout: %s\nstderr: %s", r.Code, code, r.Err, r.Stdout, r.Stderr)
	}
	for _, s := range stdout {
		if !strings.Contains(r.Stdout, s) {
			t.Fatalf("stdout lacks %q:\n%s", s, r.Stdout)
		}
	}
	return r
}

// wantErr checks a failure's exit code and its last stderr line,
// "error: <code>: …" (progress lines may come first).
func (r cliRun) wantErr(t *testing.T, code int, errCode string) cliRun {
	t.Helper()
	r.want(t, code)
	lines := strings.Split(strings.TrimRight(r.Stderr, "\n"), "\n")
	if !strings.HasPrefix(lines[len(lines)-1], "error: "+errCode+": ") {
		t.Fatalf("stderr %q, want a last line \"error: %s: …\"", r.Stderr, errCode)
	}
	return r
}

// cliEnv returns a cli.Env whose registry listener is addr ("" none).
func cliEnv(dataDir, addr string) cli.Env {
	listen := map[string]string{}
	if addr != "" {
		listen[registryapi.RoleName] = addr
	}
	return cli.Env{Node: func() (cli.Node, error) {
		return cli.Node{DataDir: dataDir, AdminListen: "127.0.0.1:1", Listen: listen}, nil
	}}
}

// cliNode is a registry role in amnesia on a loopback listener, seen by
// the CLI as the node's configured registry, with the dev signer's key
// written where `approve` looks for it by default.
type cliNode struct {
	live    *registrytest.Live
	addr    string
	dataDir string
	token   string // registry:propose, :approve and :commit
	signer  string
	key     ed25519.PrivateKey
}

func newCLINode(t *testing.T) *cliNode {
	t.Helper()
	l := registrytest.Start(t)
	n := &cliNode{live: l, addr: l.Role.Addr(), dataDir: t.TempDir(), signer: l.Signer, key: l.Key}
	n.writeKey(t, regstore.DevSignerPath(n.dataDir), n.signer, n.key)
	var err error
	n.token, _, err = l.Keys.Mint(auth.MintOptions{Scopes: []string{registryapi.ScopePropose, registryapi.ScopeApprove, registryapi.ScopeCommit}, TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// writeKey writes a signer key file for id and key.
func (n *cliNode) writeKey(t *testing.T, path, id string, key ed25519.PrivateKey) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	pub := key.Public().(ed25519.PublicKey)
	k := signerKeyFile{SchemaVersion: "1.0.0", ID: id, Algo: descriptor.AlgoEd25519,
		Pubkey: base64.StdEncoding.EncodeToString(pub), PrivateKey: base64.StdEncoding.EncodeToString(key.Seed())}
	if err := writeNewKeyFile(path, k); err != nil {
		t.Fatal(err)
	}
}

// run executes a command line against n as the node's registry.
func (n *cliNode) run(t *testing.T, args ...string) cliRun {
	t.Helper()
	return runCLI(t, cliEnv(n.dataDir, n.addr), n.token, args...)
}

// url is the registry's base URL.
func (n *cliNode) url() string { return "http://" + n.addr }

// payload is a DescriptorSet of the dev signer (1 of 1) plus tenant tag;
// chain members are left out for `propose` to fill.
func (n *cliNode) payload(tag string) map[string]any {
	pub := n.key.Public().(ed25519.PublicKey)
	return map[string]any{"items": []any{
		map[string]any{"kind": "signer", "id": n.signer, "algo": "ed25519", "pubkey": base64.StdEncoding.EncodeToString(pub)},
		map[string]any{"kind": "quorum", "id": "quorum", "m": 1, "n": 1},
		map[string]any{"kind": "tenant", "id": tag, "rps": 10, "burst": 5, "weight": 1, "max_bytes_per_s": 0},
	}}
}

// commitN commits n versions in process through httpapi.LocalClient.
func (n *cliNode) commitN(t *testing.T, count int) {
	t.Helper()
	ctx := context.Background()
	c := n.live.Local
	for i := range count {
		h, err := c.Head(ctx)
		if err != nil {
			t.Fatal(err)
		}
		p := n.payload("t-" + strconv.Itoa(i))
		p["version"], p["prev_hash"], p["created_at"] = h.Version+1, h.PayloadB3, descriptor.FormatTime(time.Now())
		raw, _ := json.Marshal(p)
		prop, err := c.Propose(ctx, descriptor.ProposeRequest{SchemaVersion: "1.0.0", Payload: raw})
		if err != nil {
			t.Fatalf("propose %d: %v", i, err)
		}
		if _, err := c.Approve(ctx, prop.ProposalID, descriptor.Sign(n.key, n.signer, prop.PayloadB3, time.Now())); err != nil {
			t.Fatalf("approve %d: %v", i, err)
		}
		if _, err := c.Commit(ctx, prop.ProposalID); err != nil {
			t.Fatalf("commit %d: %v", i, err)
		}
	}
}

// waitCheckpoint blocks until the published checkpoint covers size leaves
// (GET /registry/status, polled), bounded by a deadline.
func (n *cliNode) waitCheckpoint(t *testing.T, size uint64) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		var st registryapi.Status
		if err := json.Unmarshal(n.get(t, registryapi.RouteStatus), &st); err != nil {
			t.Fatal(err)
		}
		if st.Checkpoint.Size >= size {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("checkpoint size %d, want %d", st.Checkpoint.Size, size)
		}
		<-tick.C
	}
}

// get fetches path from the registry.
func (n *cliNode) get(t *testing.T, path string) []byte {
	t.Helper()
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Get(n.url() + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %v", path, resp.StatusCode, err)
	}
	return b
}

// cliWriteFile writes data into a fresh temp file and returns its path.
func cliWriteFile(t *testing.T, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// cliClosedAddr returns a loopback address nothing listens on.
func cliClosedAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

func TestCLIKeygen(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "k1.key")
	env := cliEnv(dir, "")
	r := runCLI(t, env, "", "registry", "keygen", "--id", "org:example#k1", "--out", out).want(t, 0, `"kind":"signer"`, `"id":"org:example#k1"`)
	var item signerItem
	if err := json.Unmarshal([]byte(r.Stdout), &item); err != nil || item.Algo != "ed25519" {
		t.Fatalf("signer item %q: %v", r.Stdout, err)
	}
	if _, err := descriptor.ParsePubkey(item.Pubkey); err != nil {
		t.Fatalf("pubkey: %v", err)
	}
	fi, err := os.Stat(out)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode: %v %v", fi, err)
	}
	id, key, err := readSignerKey(out)
	if err != nil || id != "org:example#k1" || base64.StdEncoding.EncodeToString(key.Public().(ed25519.PublicKey)) != item.Pubkey {
		t.Fatalf("read back: %s %v", id, err)
	}
	before, _ := os.ReadFile(out)
	runCLI(t, env, "", "registry", "keygen", "--id", "org:example#k2", "--out", out).wantErr(t, 1, "conflict")
	if after, _ := os.ReadFile(out); !bytes.Equal(before, after) {
		t.Fatal("keygen overwrote an existing key file")
	}
	r = runCLI(t, env, "", "registry", "keygen", "--id", "org:example#k3", "--out", filepath.Join(dir, "k3"), "-o", "json").want(t, 0)
	if err := json.Unmarshal([]byte(r.Stdout), &item); err != nil || item.ID != "org:example#k3" {
		t.Fatalf("-o json: %q %v", r.Stdout, err)
	}
}

func TestCLIInit(t *testing.T) {
	dir := t.TempDir()
	env := cliEnv(dir, "")
	roots := filepath.Join(fixtures.ModuleRoot(t), "roles", "registry", "testdata", "trust-roots.json")
	r := runCLI(t, env, "", "registry", "init", "--trust-roots", roots, "--origin", "registry.example/ron").
		want(t, 0, "genesis payload_b3: b3:", "verifier key: registry.example/ron+")
	if _, err := os.Stat(filepath.Join(dir, "keys", "registry-log.key")); err != nil {
		t.Fatalf("log key: %v (%s)", err, r.Stdout)
	}
	runCLI(t, env, "", "registry", "init", "--trust-roots", roots).wantErr(t, 1, cliCodeFailed)

	r = runCLI(t, cliEnv(t.TempDir(), ""), "", "registry", "init", "--trust-roots", roots, "-o", "json").want(t, 0)
	var res regstore.InitResult
	if err := json.Unmarshal([]byte(r.Stdout), &res); err != nil || !descriptor.IsB3(res.PayloadB3) ||
		!strings.HasPrefix(res.VerifierKey, "ron-registry/") {
		t.Fatalf("-o json: %q %v", r.Stdout, err)
	}
	bad := cliWriteFile(t, "roots.json", []byte(`{"schema_version":"1.0.0","signers":[],"quorum":{"m":1,"n":1}}`))
	runCLI(t, cliEnv(t.TempDir(), ""), "", "registry", "init", "--trust-roots", bad).want(t, 1)
}

// TestCLIProposeApproveCommit: the write cycle through the commands, with
// propose filling version, prev_hash and created_at from HEAD and now, and
// approve signing with the node's dev signer key by default.
func TestCLIProposeApproveCommit(t *testing.T) {
	n := newCLINode(t)
	raw, _ := json.Marshal(n.payload("t-a"))
	r := n.run(t, "registry", "propose", cliWriteFile(t, "set.json", raw)).want(t, 0, `"proposal_id":"p_`)
	var prop registryapi.Proposed
	if err := json.Unmarshal([]byte(r.Stdout), &prop); err != nil {
		t.Fatal(err)
	}
	n.run(t, "registry", "approve", prop.ProposalID).want(t, 0, `"status":"quorum_met"`)
	r = n.run(t, "registry", "commit", prop.ProposalID, "-o", "json").want(t, 0)
	var com registryapi.Committed
	if err := json.Unmarshal([]byte(r.Stdout), &com); err != nil || com.Version != 1 || com.PayloadB3 != prop.PayloadB3 {
		t.Fatalf("commit: %q %v", r.Stdout, err)
	}
	n.run(t, "registry", "commit", prop.ProposalID).want(t, 0, `"version":1`) // idempotent
	n.run(t, "registry", "head").want(t, 0, `"version":1`, prop.PayloadB3)
	r = n.run(t, "registry", "get", "1").want(t, 0)
	if want := n.get(t, "/registry/1"); r.Stdout != string(want)+"\n" {
		t.Fatalf("get 1 prints %q, want the canonical bytes %q", r.Stdout, want)
	}
	n.run(t, "registry", "get", "1", "-o", "json").want(t, 0, "\n  \"approvals\": [")
	n.run(t, "registry", "get", "9").wantErr(t, 1, "not_found")

	// A full proposal body with every chain member and payload_b3 given.
	p := n.payload("t-b")
	p["version"], p["prev_hash"], p["created_at"] = 2, com.PayloadB3, "2026-01-01T00:00:00Z"
	praw, _ := json.Marshal(p)
	canonical, _ := descriptor.Canonicalize(praw)
	body, _ := json.Marshal(map[string]any{"schema_version": "1.0.0", "payload": json.RawMessage(praw),
		"payload_b3": descriptor.PayloadB3(canonical)})
	r = n.run(t, "registry", "propose", cliWriteFile(t, "body.json", body), "-o", "json").want(t, 0)
	if err := json.Unmarshal([]byte(r.Stdout), &prop); err != nil || prop.PayloadB3 != descriptor.PayloadB3(canonical) {
		t.Fatalf("propose body: %q %v", r.Stdout, err)
	}
	// A stale chain is the server's 409; payload_b3 with a filled payload is refused locally.
	p["version"] = 7
	praw, _ = json.Marshal(p)
	n.run(t, "registry", "propose", cliWriteFile(t, "stale.json", praw)).wantErr(t, 1, "chain_mismatch")
	delete(p, "created_at")
	body, _ = json.Marshal(map[string]any{"schema_version": "1.0.0", "payload": p, "payload_b3": descriptor.ZeroHash})
	n.run(t, "registry", "propose", cliWriteFile(t, "incomplete.json", body)).wantErr(t, 1, "bad_request")
}

func TestCLIApproveRefusals(t *testing.T) {
	n := newCLINode(t)
	raw, _ := json.Marshal(n.payload("t-a"))
	r := n.run(t, "registry", "propose", cliWriteFile(t, "set.json", raw)).want(t, 0)
	var prop registryapi.Proposed
	_ = json.Unmarshal([]byte(r.Stdout), &prop)

	// A key that is not in HEAD's signer set: the server's 422.
	other := filepath.Join(t.TempDir(), "other.key")
	runCLI(t, cliEnv(t.TempDir(), ""), "", "registry", "keygen", "--id", "org:other#k1", "--out", other).want(t, 0)
	n.run(t, "registry", "approve", prop.ProposalID, "--key", other).wantErr(t, 1, "invalid_sig")
	// No default key on a node without the dev signer key file.
	runCLI(t, cliEnv(t.TempDir(), n.addr), n.token, "registry", "approve", prop.ProposalID).wantErr(t, 1, "bad_request")
	n.run(t, "registry", "approve", "p_"+strings.Repeat("0", 32)).wantErr(t, 1, "not_found")
	n.run(t, "registry", "commit", prop.ProposalID).wantErr(t, 1, "quorum_failed")
	// Without a token the server refuses the write.
	runCLI(t, cliEnv(n.dataDir, n.addr), "", "registry", "commit", prop.ProposalID).want(t, 1)
}

// TestCLIApproveChecksPayload: approve recomputes payload_b3 from the
// payload it was served and refuses to sign (no POST) when they differ.
func TestCLIApproveChecksPayload(t *testing.T) {
	n := newCLINode(t)
	raw, _ := json.Marshal(n.payload("t-a"))
	canonical, _ := descriptor.Canonicalize(raw)
	b3 := descriptor.PayloadB3(canonical)
	id := descriptor.ProposalID(b3)
	posted := false
	for _, tc := range []struct {
		name string
		prop registryapi.Proposal
	}{
		{"payload edited", registryapi.Proposal{ProposalID: id, Payload: json.RawMessage(bytes.Replace(raw, []byte("t-a"), []byte("t-b"), 1)), PayloadB3: b3}},
		{"b3 of another payload", registryapi.Proposal{ProposalID: id, Payload: raw, PayloadB3: descriptor.ZeroHash}},
		{"id of another payload", registryapi.Proposal{ProposalID: id, Payload: json.RawMessage(`{"items":[]}`),
			PayloadB3: descriptor.PayloadB3([]byte(`{"items":[]}`))}},
	} {
		srv := fakeRegistry(t, func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPost {
				posted = true
			}
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(tc.prop)
		})
		runCLI(t, cliEnv(n.dataDir, srv), "tok", "registry", "approve", id).wantErr(t, 1, "hash_mismatch")
	}
	if posted {
		t.Fatal("approve posted an approval for a mismatching payload")
	}
}

// TestCLIBadArguments: invalid arguments exit 1 before any request (the
// configured listener is closed, which would exit 2).
func TestCLIBadArguments(t *testing.T) {
	dir := t.TempDir()
	env := cliEnv(dir, cliClosedAddr(t))
	dup := cliWriteFile(t, "dup.json", []byte(`{"items":[],"items":[]}`))
	arr := cliWriteFile(t, "arr.json", []byte(`[1]`))
	unknown := cliWriteFile(t, "unknown.json", []byte(`{"schema_version":"1.0.0","payload":{},"extra":1}`))
	id := "p_" + strings.Repeat("a", 32)
	for _, args := range [][]string{
		{"registry"},
		{"registry", "bogus"},
		{"registry", "head", "extra"},
		{"registry", "head", "-o", "yaml"},
		{"registry", "head", "--bogus"},
		{"registry", "get"},
		{"registry", "get", "01"},
		{"registry", "get", "-1"},
		{"registry", "get", "x"},
		{"registry", "get", "18446744073709551616"},
		{"registry", "commit", "p_xyz"},
		{"registry", "commit", strings.ToUpper(id)},
		{"registry", "commit"},
		{"registry", "approve", "p_1"},
		{"registry", "approve", id, "--key", filepath.Join(dir, "absent.key")},
		{"registry", "approve", id, "--key", dup},
		{"registry", "propose"},
		{"registry", "propose", filepath.Join(dir, "absent.json")},
		{"registry", "propose", dup},
		{"registry", "propose", arr},
		{"registry", "propose", unknown},
		{"registry", "keygen", "--id", "bad id", "--out", filepath.Join(dir, "x")},
		{"registry", "keygen", "--id", "org:example#k1"},
		{"registry", "keygen", "--id", "org:example#k1", "--out", filepath.Join(dir, "y"), "-o", "yaml"},
		{"registry", "init"},
		{"registry", "init", "--trust-roots", filepath.Join(dir, "absent.json")},
		{"registry", "verify"},
		{"registry", "verify", "not a url"},
		{"registry", "verify", "http://127.0.0.1:1", "--genesis", "b3:xyz"},
		{"registry", "verify", "http://127.0.0.1:1", "--log-key", filepath.Join(dir, "absent")},
		{"registry", "verify", "http://127.0.0.1:1", "-o", "yaml"},
	} {
		r := runCLI(t, env, "tok", args...)
		if r.Code != cli.ExitFailure || !strings.HasPrefix(r.Stderr, "error: bad_request: ") {
			t.Errorf("%q: exit %d (err %v, stderr %q), want 1 and error: bad_request", args, r.Code, r.Err, r.Stderr)
		}
	}
}

// TestCLIUnreachable: a registry that refuses connections exits 2 (client
// retries wait on the bubble's clock).
func TestCLIUnreachable(t *testing.T) {
	addr := cliClosedAddr(t)
	dir := t.TempDir()
	key := filepath.Join(dir, "k.key")
	runCLI(t, cliEnv(dir, ""), "", "registry", "keygen", "--id", "org:example#k1", "--out", key).want(t, 0)
	set := cliWriteFile(t, "set.json", []byte(`{"items":[]}`))
	id := "p_" + strings.Repeat("a", 32)
	synctest.Test(t, func(t *testing.T) {
		env := cliEnv(dir, addr)
		for _, args := range [][]string{
			{"registry", "head"},
			{"registry", "get", "1"},
			{"registry", "commit", id},
			{"registry", "approve", id, "--key", key},
			{"registry", "propose", set},
			{"registry", "head", "--server", "http://" + addr},
			{"registry", "verify", "http://" + addr},
		} {
			r := runCLI(t, env, "tok", args...)
			if r.Code != cli.ExitUnreachable || !strings.Contains(r.Stderr, "error: unreachable: ") {
				t.Errorf("%q: exit %d (err %v, stderr %q), want 2", args, r.Code, r.Err, r.Stderr)
			}
		}
	})
}

// TestCLIServerFlag: --server overrides the configured listener; with
// neither the command fails with exit 1 pointing at --server.
func TestCLIServerFlag(t *testing.T) {
	n := newCLINode(t)
	env := cliEnv(t.TempDir(), "")
	runCLI(t, env, "", "registry", "head", "--server", n.url()).want(t, 0, `"version":0`)
	r := runCLI(t, env, "", "registry", "head").wantErr(t, 1, cliCodeFailed)
	if !strings.Contains(r.Stderr, "--server") {
		t.Fatalf("stderr %q does not point at --server", r.Stderr)
	}
}

// fakeRegistry serves handler on a loopback listener and returns its
// host:port.
func fakeRegistry(t *testing.T, handler http.HandlerFunc) string {
	t.Helper()
	srv := httptest.NewServer(handler)
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}
