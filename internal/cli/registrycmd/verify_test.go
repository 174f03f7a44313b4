package registrycmd

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ronhq/ron/internal/tooltest"
	"github.com/ronhq/ron/roles/registry/registryapi/descriptor"
)

// TestCLIVerifyLive: `ron registry verify` against a live registry passes
// with a pinned key (string or file), the genesis pin and a state file, and
// fails with exit 1 naming the check on a wrong pin.
func TestCLIVerifyLive(t *testing.T) {
	n := newCLINode(t)
	n.commitN(t, 300)
	n.waitCheckpoint(t, 301)
	vkey := strings.TrimSpace(string(n.get(t, "/registry/log/key")))
	genesis := genesisB3(t, n.get(t, "/registry/0"))
	state := filepath.Join(t.TempDir(), "state.json")
	env := cliEnv(t.TempDir(), "")

	runCLI(t, env, "", "registry", "verify", n.url(), "--log-key", vkey, "--genesis", genesis, "--state", state).
		want(t, 0, "ok  ", "size 301", "verified 301 from 0", "(pinned key)")
	n.commitN(t, 20)
	n.waitCheckpoint(t, 321)
	keyFile := cliWriteFile(t, "vkey", []byte(vkey+"\n"))
	r := runCLI(t, env, "", "registry", "verify", n.url(), "--log-key", keyFile, "--state", state, "-o", "json").want(t, 0)
	for _, s := range []string{`"size": 321`, `"previous_size": 301`, `"state_saved": true`, `"unpinned": false`} {
		if !strings.Contains(r.Stdout, s) {
			t.Fatalf("-o json lacks %s:\n%s", s, r.Stdout)
		}
	}
	r = runCLI(t, env, "", "registry", "verify", n.url()).want(t, 0, "(unpinned key)")
	if !strings.Contains(r.Stderr, "warning: unpinned") {
		t.Fatalf("no unpinned warning: %q", r.Stderr)
	}
	runCLI(t, env, "", "registry", "verify", n.url(), "--genesis", descriptor.ZeroHash).
		wantErr(t, 1, cliCodeVerify)
	other := "ron-registry/0000000000000000+00000000+AQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
	runCLI(t, env, "", "registry", "verify", n.url(), "--log-key", other).want(t, 1)
}

// genesisB3 is version 0's payload_b3.
func genesisB3(t *testing.T, leaf []byte) string {
	t.Helper()
	a, err := descriptor.ParseArtifact(leaf)
	if err != nil {
		t.Fatal(err)
	}
	return a.PayloadB3
}

// TestCLIVerifyTampered: a proxy in front of a live registry flips a byte
// of one artifact in its entry bundle, or swaps two level-0 tile hashes;
// verify fails with exit 1 naming that version.
func TestCLIVerifyTampered(t *testing.T) {
	n := newCLINode(t)
	n.commitN(t, 299)
	n.waitCheckpoint(t, 300)
	vkey := strings.TrimSpace(string(n.get(t, "/registry/log/key")))
	for _, tc := range []struct {
		name, path string
		edit       func([]byte) []byte
		want       string
	}{
		{"flipped artifact byte", "/registry/log/tile/entries/001.p/44", func(b []byte) []byte {
			return flipLeafByte(b, 270-256, 60)
		}, "version 270: "},
		{"swapped tile hashes", "/registry/log/tile/0/001.p/44", func(b []byte) []byte {
			b = bytes.Clone(b)
			h := bytes.Clone(b[3*32 : 4*32])
			copy(b[3*32:], b[4*32:5*32])
			copy(b[4*32:], h)
			return b
		}, "version 259: leaf: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			proxy := tamperProxy(t, n.url(), tc.path, tc.edit)
			r := runCLI(t, cliEnv(t.TempDir(), ""), "", "registry", "verify", proxy, "--log-key", vkey).
				wantErr(t, 1, cliCodeVerify)
			if !strings.Contains(r.Stderr, tc.want) {
				t.Fatalf("stderr %q does not name %q", r.Stderr, tc.want)
			}
		})
	}
}

// flipLeafByte flips byte off of leaf i in an entry bundle.
func flipLeafByte(b []byte, i, off int) []byte {
	b = bytes.Clone(b)
	pos := 0
	for range i {
		pos += 2 + int(binary.BigEndian.Uint16(b[pos:]))
	}
	b[pos+2+off] ^= 0x20
	return b
}

// tamperProxy reverse-proxies to target, passing edit the body of path.
func tamperProxy(t *testing.T, target, path string, edit func([]byte) []byte) string {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	rp := &httputil.ReverseProxy{Transport: tr, Rewrite: func(pr *httputil.ProxyRequest) {
		pr.SetURL(u)
		pr.Out.Header.Del("Accept-Encoding") // identity bodies, editable
	}}
	rp.ModifyResponse = func(resp *http.Response) error {
		if resp.Request.URL.Path != path {
			return nil
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return err
		}
		body = edit(body)
		resp.Body = io.NopCloser(bytes.NewReader(body))
		resp.ContentLength = int64(len(body))
		resp.Header.Set("Content-Length", strconv.Itoa(len(body)))
		return nil
	}
	srv := httptest.NewServer(rp)
	t.Cleanup(srv.Close)
	return srv.URL
}

// fsckInstall is how scripts/test.sh installs Tessera's fsck.
const fsckInstall = "go install github.com/transparency-dev/tessera/cmd/fsck@v1.0.4"

// TestTesseraFsck runs Tessera's fsck against a live registry of 650
// versions (full and partial tiles and entry bundles at level 0, a partial
// tile at level 1) and requires its success line; v1.0.4 exits 0 even on
// failure, so stderr decides. The same log passes `ron registry verify`.
func TestTesseraFsck(t *testing.T) {
	bin := tooltest.GoBinary("fsck", tooltest.FsckPackage)
	if bin == "" {
		tooltest.Missing(t, "Tessera fsck is not installed: %s", fsckInstall)
	}
	n := newCLINode(t)
	n.commitN(t, 649)
	n.waitCheckpoint(t, 650)
	vkey := n.get(t, "/registry/log/key")
	keyFile := cliWriteFile(t, "vkey", vkey)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--storage_url="+n.url()+"/registry/log/", "--public_key="+keyFile, "--ui=false")
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = io.Discard, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("fsck: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "Successfully fsck'd log with size 650") || strings.Contains(stderr.String(), "fsck failed") {
		t.Fatalf("fsck did not succeed:\n%s", stderr.String())
	}
	runCLI(t, cliEnv(t.TempDir(), ""), "", "registry", "verify", n.url(), "--log-key", keyFile).
		want(t, 0, "size 650", "verified 650 from 0")
}
