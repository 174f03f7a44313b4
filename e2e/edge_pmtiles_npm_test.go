package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ronhq/ron/roles/edge/pmtiles"
	"github.com/ronhq/ron/roles/edge/pmtiles/pmtilestest"
)

// Limits of the npm pmtiles test.
const (
	// pmtCommandLimit is the client's own limit per command (--timeout-ms).
	pmtCommandLimit = 30 * time.Second
	// pmtRunLimit bounds the whole node process; it is killed after it.
	pmtRunLimit = 2 * time.Minute
)

// pmtExchange is one HTTP request the npm library made, as
// pmtiles-client.mjs reports it.
type pmtExchange struct {
	Range        string  `json:"range"`
	IfMatch      *string `json:"if_match"`
	Cache        *string `json:"cache"`
	Status       int     `json:"status"`
	ETag         string  `json:"etag"`
	ContentRange string  `json:"content_range"`
	Error        string  `json:"error"`
}

// String is a compact form for logs.
func (ex pmtExchange) String() string {
	opt := func(p *string) string {
		if p == nil {
			return "-"
		}
		return *p
	}
	return fmt.Sprintf("{%s if-match:%s cache:%s → %d %s %s%s}", ex.Range, opt(ex.IfMatch), opt(ex.Cache), ex.Status, ex.ETag, ex.ContentRange, ex.Error)
}

// pmtAnswer is one answer line of pmtiles-client.mjs.
type pmtAnswer struct {
	Op        string          `json:"op"`
	OK        bool            `json:"ok"`
	Error     string          `json:"error"`
	Header    map[string]any  `json:"header"`
	Metadata  json.RawMessage `json:"metadata"`
	Found     bool            `json:"found"`
	Data      []byte          `json:"data"` // base64 in the JSON
	Exchanges []pmtExchange   `json:"exchanges"`
}

// pmtClient is one running pmtiles-client.mjs: one PMTiles instance over
// one FetchSource, driven command by command.
type pmtClient struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	out    *bufio.Scanner
	stderr *lockedBuffer
	cancel context.CancelFunc
}

// startPMTClient starts `node pmtiles-client.mjs url`; it is killed at test
// end if still running.
func startPMTClient(t *testing.T, script, url string) *pmtClient {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), pmtRunLimit)
	c := &pmtClient{stderr: &lockedBuffer{}, cancel: cancel}
	c.cmd = exec.CommandContext(ctx, "node", script, url, "--timeout-ms", strconv.FormatInt(pmtCommandLimit.Milliseconds(), 10))
	c.cmd.Env = cleanEnv()
	c.cmd.Stderr = c.stderr
	var err error
	if c.stdin, err = c.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := c.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	c.out = bufio.NewScanner(stdout)
	c.out.Buffer(make([]byte, 1<<20), 16<<20)
	if err := c.cmd.Start(); err != nil {
		cancel()
		t.Fatalf("start node %s: %v", script, err)
	}
	t.Cleanup(func() {
		c.stdin.Close()
		cancel()
		_ = c.cmd.Wait()
		if t.Failed() {
			t.Logf("---- pmtiles-client.mjs stderr ----\n%s---- end ----", c.stderr.String())
		}
	})
	return c
}

// ask sends one command and returns its answer; a client that is gone
// fails the test.
func (c *pmtClient) ask(t *testing.T, cmd map[string]any) pmtAnswer {
	t.Helper()
	line, _ := json.Marshal(cmd)
	if _, err := c.stdin.Write(append(line, '\n')); err != nil {
		t.Fatalf("pmtiles-client: write %s: %v; stderr: %s", line, err, c.stderr.String())
	}
	if !c.out.Scan() {
		t.Fatalf("pmtiles-client: no answer to %s (%v); stderr: %s", line, c.out.Err(), c.stderr.String())
	}
	var a pmtAnswer
	if err := json.Unmarshal(c.out.Bytes(), &a); err != nil {
		t.Fatalf("pmtiles-client: answer %q: %v", c.out.Bytes(), err)
	}
	return a
}

// mustAsk is ask for a command that must succeed.
func (c *pmtClient) mustAsk(t *testing.T, cmd map[string]any) pmtAnswer {
	t.Helper()
	a := c.ask(t, cmd)
	if !a.OK {
		t.Fatalf("pmtiles-client %v: %s; exchanges %+v", cmd, a.Error, a.Exchanges)
	}
	return a
}

// tile asks for tile z/x/y.
func (c *pmtClient) tile(t *testing.T, zxy [3]uint32) pmtAnswer {
	t.Helper()
	return c.mustAsk(t, map[string]any{"op": "tile", "z": zxy[0], "x": zxy[1], "y": zxy[2]})
}

// finish closes the client's stdin and wants exit 0.
func (c *pmtClient) finish(t *testing.T) {
	t.Helper()
	c.stdin.Close()
	if err := c.cmd.Wait(); err != nil {
		t.Fatalf("pmtiles-client.mjs: %v; stderr: %s", err, c.stderr.String())
	}
}

// pmtTiles are the tiles the test reads: every zoom of stamen_toner_z3,
// including the run-length entry at id 58 (covering 58 and 59).
var pmtTiles = [][3]uint32{{0, 0, 0}, {1, 0, 1}, {1, 1, 0}, {2, 1, 2}, {3, 5, 3}, {3, 7, 7}, {3, 0, 4}}

// replacementArchive has the same tiles as stamen_toner_z3 (zooms 0–3)
// with other bytes (naming gen) and other metadata, so every tile the client
// asks for is in both archives' directories. It is about 2.8 kB, so most of
// stamen_toner_z3's tile offsets lie past its end.
func replacementArchive(t *testing.T, gen string) []byte {
	t.Helper()
	return edgeArchive(t, edgePyramid(3, func(z, x, y uint32) []byte {
		return fmt.Appendf([]byte("\x89PNG\r\n\x1a\n"), "%s tile %d/%d/%d", gen, z, x, y)
	}), pmtilestest.Options{TileType: pmtiles.TileTypePNG, TileCompression: pmtiles.CompressionNone,
		Metadata: fmt.Appendf(nil, `{"name":"replacement","version":%q}`, gen)})
}

// TestEdgePMTilesNpmClient: the npm `pmtiles` library (FetchSource, the
// browser-side reader, pinned in scripts/node) reads the header, metadata and
// tiles of /packs/toner.pmtiles through the edge, byte for byte what the Go
// reader gives. Then the archive is replaced on disk by rename, twice; each
// time, once the edge serves the new ETag, the same PMTiles instance, which
// still caches the previous header and directories, must return the new
// tiles and never an old one.
//
// What the library really does (node_modules/pmtiles/src/index.ts,
// FetchSource.getBytes): it sends no If-Match (deliberately, for CORS and
// browser caching); it compares the ETag of every range answer with the one
// of the header it cached, and treats a different ETag or a 416 as
// EtagMismatch; getZxy then invalidates the cached header and retries once,
// re-reading bytes 0–16383 with fetch cache mode "reload". The test checks
// exactly that sequence, and separately that the edge answers an If-Match
// with the old ETag with 412.
func TestEdgePMTilesNpmClient(t *testing.T) {
	t.Parallel()
	script := npmScript(t, "pmtiles-client.mjs", "pmtiles")
	old := edgeReadFile(t, edgeFixture(t, "pmtiles", "stamen_toner_z3.pmtiles"))
	packs := t.TempDir()
	archive := filepath.Join(packs, "toner.pmtiles")
	edgeWriteFile(t, archive, old)
	e := startEdge(t, edgeSpec{roles: "edge", packs: packs})
	oldETag := e.waitPackETag("toner", "")

	c := startPMTClient(t, script, e.edgeURL("/packs/toner.pmtiles"))
	checkPMTArchive(t, c, old, oldETag, json.RawMessage(`{}`))

	// 1: the old offset of tile 3/7/7 lies past the replacement's end: the
	// stale read is a 416 (with Content-Range bytes */N).
	etag := replacePack(t, e, c, archive, oldETag, "one", [3]uint32{3, 7, 7}, http.StatusRequestedRangeNotSatisfiable)
	// 2: a replacement of the same layout: the stale read of tile 0/0/0 is
	// a 206 under the new ETag.
	replacePack(t, e, c, archive, etag, "two", [3]uint32{0, 0, 0}, http.StatusPartialContent)
	c.finish(t)
}

// replacePack renames a new archive (replacementArchive(gen)) over path,
// waits until the edge serves it, checks that the edge answers If-Match with
// the old ETag with 412, then reads tile zxy through c, which still holds
// the old header and directories: the library's first request must get
// staleStatus, and c must recover and return the new tile; then the whole
// new archive is checked. It returns the new ETag.
func replacePack(t *testing.T, e *edgeNode, c *pmtClient, path, oldETag, gen string, zxy [3]uint32, staleStatus int) string {
	t.Helper()
	replacement := replacementArchive(t, gen)
	edgeReplace(t, path, replacement)
	newETag := e.waitPackETag(strings.TrimSuffix(filepath.Base(path), ".pmtiles"), oldETag)
	r := e.get(http.MethodGet, "/packs/"+filepath.Base(path), hdr("If-Match", oldETag, "Range", "bytes=0-16383"))
	wantError(t, "If-Match with the replaced archive's ETag", r, http.StatusPreconditionFailed, "precondition_failed")

	first := c.tile(t, zxy)
	t.Logf("%s: first tile read after the replacement: %v", gen, first.Exchanges)
	checkRecovery(t, first.Exchanges, oldETag, newETag, staleStatus, len(replacement))
	if want := edgeGoTiles(t, replacement, [][3]uint32{zxy})[0]; !bytes.Equal(first.Data, want) {
		t.Fatalf("tile %v after the replacement: %q, want the new archive's %q", zxy, first.Data, want)
	}
	checkPMTArchive(t, c, replacement, newETag, fmt.Appendf(nil, `{"name":"replacement","version":%q}`, gen))
	return newETag
}

// checkPMTArchive reads the header, metadata and pmtTiles through c and
// compares them with what the Go reader gives for archive; every HTTP
// answer must carry etag.
func checkPMTArchive(t *testing.T, c *pmtClient, archive []byte, etag string, meta json.RawMessage) {
	t.Helper()
	h := c.mustAsk(t, map[string]any{"op": "header"})
	checkPMTHeader(t, h.Header, archive, etag)
	m := c.mustAsk(t, map[string]any{"op": "metadata"})
	if !jsonEqual(m.Metadata, meta) {
		t.Errorf("metadata %s, want %s", m.Metadata, meta)
	}
	want := edgeGoTiles(t, archive, pmtTiles)
	answers := []pmtAnswer{h, m}
	for i, zxy := range pmtTiles {
		a := c.tile(t, zxy)
		answers = append(answers, a)
		if !a.Found || !bytes.Equal(a.Data, want[i]) {
			t.Errorf("tile %v: found %v, %d bytes; the Go reader gives %d bytes (equal: %v)", zxy, a.Found, len(a.Data), len(want[i]), bytes.Equal(a.Data, want[i]))
		}
	}
	for _, a := range answers {
		for _, ex := range a.Exchanges {
			if ex.Status != http.StatusPartialContent || ex.ETag != etag || ex.IfMatch != nil {
				t.Errorf("%s: exchange %+v; want 206 with ETag %s and no If-Match", a.Op, ex, etag)
			}
		}
	}
}

// checkPMTHeader compares the library's header with the Go reader's.
func checkPMTHeader(t *testing.T, got map[string]any, archive []byte, etag string) {
	t.Helper()
	h, err := pmtiles.ParseHeader(archive)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{
		"specVersion": float64(h.Version), "rootDirectoryOffset": float64(h.RootOffset), "rootDirectoryLength": float64(h.RootLength),
		"jsonMetadataOffset": float64(h.MetadataOffset), "jsonMetadataLength": float64(h.MetadataLength),
		"leafDirectoryOffset": float64(h.LeafOffset), "tileDataOffset": float64(h.TileDataOffset), "tileDataLength": float64(h.TileDataLength),
		"numTileEntries": float64(h.TileEntries), "internalCompression": float64(h.InternalCompression),
		"tileCompression": float64(h.TileCompression), "tileType": float64(h.TileType),
		"minZoom": float64(h.MinZoom), "maxZoom": float64(h.MaxZoom),
	}
	for k, v := range want {
		if g, ok := got[k].(float64); !ok || g != v {
			t.Errorf("header %s = %v, the Go reader says %v", k, got[k], v)
		}
	}
	if got["etag"] != etag {
		t.Errorf("header etag %v, want %s", got["etag"], etag)
	}
}

// checkRecovery checks the exchanges of the first tile read after the
// replacement: the answer to the old offsets is staleStatus (a 206 showing
// the new ETag, or a 416 with bytes */size when the old range lies past the
// new file's end), then the header is re-read with fetch cache mode
// "reload", and nothing was served under the old ETag; no request carried
// If-Match.
func checkRecovery(t *testing.T, exs []pmtExchange, oldETag, newETag string, staleStatus, size int) {
	t.Helper()
	if len(exs) < 3 {
		t.Fatalf("exchanges %+v: want the stale read, the header re-read and the tile read", exs)
	}
	s := exs[0]
	switch {
	case s.Status != staleStatus:
		t.Errorf("first exchange %+v: status %d, want %d", s, s.Status, staleStatus)
	case s.Status == http.StatusPartialContent && s.ETag != newETag:
		t.Errorf("first exchange %+v: want the new ETag %s", s, newETag)
	case s.Status == http.StatusRequestedRangeNotSatisfiable && s.ContentRange != fmt.Sprintf("bytes */%d", size):
		t.Errorf("first exchange %+v: want Content-Range bytes */%d", s, size)
	}
	if r := exs[1]; r.Range != "bytes=0-16383" || r.Cache == nil || *r.Cache != "reload" || r.ETag != newETag {
		t.Errorf("second exchange %+v: want the header re-read (bytes=0-16383, cache reload) under %s", r, newETag)
	}
	for _, ex := range exs {
		if ex.IfMatch != nil {
			t.Errorf("exchange %+v carries If-Match: the pinned library sends none", ex)
		}
		if ex.ETag == oldETag {
			t.Errorf("exchange %+v was answered under the old ETag after the edge served the new one", ex)
		}
	}
}

// jsonEqual compares two JSON texts by value.
func jsonEqual(a, b []byte) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && reflect.DeepEqual(x, y)
}
