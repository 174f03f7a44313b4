package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/zeebo/blake3"
	"go.uber.org/goleak"
)

// Limits the helpers wait against. They are upper bounds for polls, never
// sleeps: a healthy run finishes each wait in milliseconds.
const (
	readyLimit = 20 * time.Second // process start → /readyz 200
	exitLimit  = 15 * time.Second // signal → process exit (default)
	cliLimit   = 2 * time.Minute  // one CLI invocation (100 MiB put/get)
	pollEvery  = 10 * time.Millisecond
)

// ronBin is the binary under test, built once by TestMain.
var ronBin string

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "ron-e2e-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	ronBin = filepath.Join(dir, "ron")
	build := exec.Command("go", "build", "-o", ronBin, ".")
	build.Dir = ".." // the module root: main.go lives there
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: go build of the ron binary failed:", err)
		return 1
	}
	code := m.Run()
	if bigFileDir != "" {
		os.RemoveAll(bigFileDir)
	}
	if code == 0 {
		code = checkLeaks()
	}
	return code
}

// checkLeaks is goleak.VerifyTestMain's check, run once the binary's temp
// dir is gone: idle keep-alive connections are closed first, every other
// goroutine still running is a leak.
func checkLeaks() int {
	httpClient.CloseIdleConnections()
	http.DefaultClient.CloseIdleConnections()
	if err := goleak.Find(); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: goroutines leaked:", err)
		return 1
	}
	return 0
}

// poll calls cond every pollEvery until it reports true, failing the test
// when limit passes first.
func poll(t testing.TB, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	if !pollUntil(limit, cond) {
		t.Fatalf("timed out after %s waiting for %s", limit, what)
	}
}

// pollUntil is poll without the test: it reports whether cond became true.
func pollUntil(limit time.Duration, cond func() bool) bool {
	return pollUntilEvery(limit, pollEvery, cond)
}

// pollUntilEvery is pollUntil calling cond every `every` (for conditions
// that cost a request or more).
func pollUntilEvery(limit, every time.Duration, cond func() bool) bool {
	deadline := time.NewTimer(limit)
	defer deadline.Stop()
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		if cond() {
			return true
		}
		select {
		case <-tick.C:
		case <-deadline.C:
			return cond()
		}
	}
}

// freeAddr returns a loopback address with a port below the ephemeral
// range that was free a moment ago and that no earlier call in this
// process returned.
func freeAddr(t testing.TB) string {
	t.Helper()
	for range 1000 {
		port := plannedPortLow + rand.IntN(plannedPortHigh-plannedPortLow)
		ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err != nil {
			continue // in use: try another
		}
		addr := ln.Addr().String()
		ln.Close()
		if handedOut.claim(addr) {
			return addr
		}
	}
	t.Fatalf("no free port in %d–%d", plannedPortLow, plannedPortHigh)
	return ""
}

// Planned listener ports come from below Linux's ephemeral range (32768–
// 60999 by default): a port the kernel hands to an outgoing connection or
// a ":0" listener of another test process (Raft and gossip tests make
// many) can never take one between freeAddr and the node's bind.
const (
	plannedPortLow  = 20000
	plannedPortHigh = 32000
)

// handedOut remembers every address freeAddr returned in this test
// process, so two listeners planned before either binds never share a port
// (the kernel may hand a just-closed port out again at once).
var handedOut = &addrSet{seen: map[string]bool{}}

type addrSet struct {
	mu   sync.Mutex
	seen map[string]bool
}

// claim records addr and reports whether it was new.
func (s *addrSet) claim(addr string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.seen[addr] {
		return false
	}
	s.seen[addr] = true
	return true
}

// lockedBuffer collects a process's output from its copy goroutine while
// tests read it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// cleanEnv is the test process's environment without any RON_ variable, so
// that a developer's settings never leak into the processes under test.
func cleanEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "RON_") {
			env = append(env, kv)
		}
	}
	return append(env, extra...)
}

// nodePorts are the host:port listeners of one node. Tests that must know
// a node's addresses before it starts (index peers name each other) reserve
// them with freePorts; a restart reuses them.
type nodePorts struct {
	admin, storage, index, registry, gateway, edge string
}

// freePorts reserves a fresh loopback address for every listener.
func freePorts(t testing.TB) nodePorts {
	t.Helper()
	return nodePorts{admin: freeAddr(t), storage: freeAddr(t), index: freeAddr(t), registry: freeAddr(t), gateway: freeAddr(t),
		edge: freeAddr(t)}
}

// nodeOpts configure one `ron serve` process.
type nodeOpts struct {
	dataDir string    // "" = a fresh temp dir
	args    []string  // extra serve flags
	ports   nodePorts // zero = fresh ports per launch
	// degradedOK accepts a /readyz 503 that lists only degraded items (a node
	// started with min_free_bytes above the disk's free space).
	degradedOK bool
	// command makes the process's Cmd from the binary and its arguments;
	// nil is exec.Command. The Cmd's pid must be ron's own (signals are
	// sent to it), as with netLab.command.
	command func(name string, args ...string) *exec.Cmd
}

// node is one running `ron serve`.
type node struct {
	t        *testing.T
	name     string
	dataDir  string
	admin    string // host:port of the admin plane
	storage  string // host:port of the storage listener
	index    string // host:port of the index listener
	registry string // host:port of the registry listener
	gateway  string // host:port of the gateway listener
	edge     string // host:port of the edge listener
	opts     nodeOpts
	cmd      *exec.Cmd
	out      *lockedBuffer
	exited   chan struct{} // closed once the process has been reaped
	state    *os.ProcessState
}

var nodeSeq struct {
	sync.Mutex
	n int
}

// startNode starts `ron serve` and waits until it is ready. The process is
// killed at test end; its stderr is printed when the test failed. A start
// that lost its port to another socket between freeAddr and the bind is
// retried on fresh ports.
func startNode(t *testing.T, o nodeOpts) *node {
	t.Helper()
	if o.dataDir == "" {
		o.dataDir = t.TempDir()
	}
	for attempt := 1; ; attempt++ {
		n := launch(t, o)
		err := n.waitReady(o.degradedOK)
		if err == nil {
			return n
		}
		fresh := o.ports == (nodePorts{})
		if fresh && attempt < 3 && !n.running() && strings.Contains(n.out.String(), "address already in use") {
			t.Logf("%s: a port was taken before ron bound it; retrying on fresh ports", n.name)
			continue
		}
		t.Fatal(err)
	}
}

// launch starts one `ron serve` process on o.ports, or on fresh ports when
// o.ports is zero. Every listener gets its own port, so parallel tests never
// meet on a default one.
func launch(t *testing.T, o nodeOpts) *node {
	t.Helper()
	nodeSeq.Lock()
	nodeSeq.n++
	name := fmt.Sprintf("node%d", nodeSeq.n)
	nodeSeq.Unlock()
	p := o.ports
	if p == (nodePorts{}) {
		p = freePorts(t)
	}
	n := &node{t: t, name: name, dataDir: o.dataDir, admin: p.admin, storage: p.storage, index: p.index,
		registry: p.registry, gateway: p.gateway, edge: p.edge, opts: o, out: &lockedBuffer{}, exited: make(chan struct{})}
	args := append([]string{"serve", "--admin.listen", n.admin, "--storage.listen", n.storage,
		"--index.listen", n.index, "--registry.listen", n.registry, "--gateway.listen", n.gateway,
		"--edge.listen", n.edge, "--data-dir", n.dataDir}, o.args...)
	command := o.command
	if command == nil {
		command = exec.Command
	}
	n.cmd = command(ronBin, args...)
	n.cmd.Dir = n.dataDir
	n.cmd.Env = cleanEnv()
	n.cmd.Stdout, n.cmd.Stderr = n.out, n.out
	if err := n.cmd.Start(); err != nil {
		t.Fatalf("start ron serve: %v", err)
	}
	go func() { // reaps the process; ends when it exits
		_ = n.cmd.Wait()
		n.state = n.cmd.ProcessState
		close(n.exited)
	}()
	t.Cleanup(func() {
		if n.running() {
			_ = n.cmd.Process.Kill()
		}
		<-n.exited
		if t.Failed() {
			t.Logf("---- %s (ron serve %s) output ----\n%s---- end %s ----", n.name, strings.Join(args[1:], " "), n.out.String(), n.name)
		}
	})
	return n
}

// restart starts a new `ron serve` on n's data dir, ports and flags (n must
// have exited) and waits until it is ready.
func (n *node) restart() *node {
	n.t.Helper()
	o := n.opts
	o.dataDir = n.dataDir
	o.ports = nodePorts{admin: n.admin, storage: n.storage, index: n.index, registry: n.registry, gateway: n.gateway, edge: n.edge}
	return startNode(n.t, o)
}

func (n *node) running() bool {
	select {
	case <-n.exited:
		return false
	default:
		return true
	}
}

// waitReady polls the admin plane's /readyz until it answers 200 (or, with
// degradedOK, a 503 whose only items are degraded ones).
func (n *node) waitReady(degradedOK bool) error {
	c := &http.Client{Timeout: time.Second}
	var last string
	ok := pollUntil(readyLimit, func() bool {
		if !n.running() {
			return true // reported below
		}
		resp, err := c.Get("http://" + n.admin + "/readyz")
		if err != nil {
			last = err.Error()
			return false
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		last = fmt.Sprintf("%d %s", resp.StatusCode, body)
		if resp.StatusCode == http.StatusOK {
			return true
		}
		var rd readyzBody
		return degradedOK && json.Unmarshal(body, &rd) == nil && len(rd.Missing) == 0 && len(rd.Degraded) > 0
	})
	if !n.running() {
		return fmt.Errorf("%s exited before becoming ready (%v)", n.name, n.state)
	}
	if !ok {
		return fmt.Errorf("%s not ready after %s; last /readyz: %s", n.name, readyLimit, last)
	}
	return nil
}

// signal sends sig to the process.
func (n *node) signal(sig syscall.Signal) {
	n.t.Helper()
	if err := n.cmd.Process.Signal(sig); err != nil {
		n.t.Fatalf("signal %v: %v", sig, err)
	}
}

// kill9 kills the process with SIGKILL and waits until it is reaped.
func (n *node) kill9() {
	n.t.Helper()
	_ = n.cmd.Process.Kill()
	n.waitExit(exitLimit)
}

// waitExit waits for the process to exit and returns its exit code (-1 when
// killed by a signal).
func (n *node) waitExit(limit time.Duration) int {
	n.t.Helper()
	t := time.NewTimer(limit)
	defer t.Stop()
	select {
	case <-n.exited:
		return n.state.ExitCode()
	case <-t.C:
		n.t.Fatalf("%s still running %s after it was asked to stop", n.name, limit)
		return 0
	}
}

func (n *node) url(path string) string { return "http://" + n.storage + path }

// storageDir is <data>/storage.
func (n *node) storageDir() string { return filepath.Join(n.dataDir, "storage") }

// objectPath is where the fs engine keeps an object's bytes.
func (n *node) objectPath(id string) string {
	h := strings.TrimPrefix(id, "b3:")
	return filepath.Join(n.storageDir(), "objects", h[0:2], h[2:4], h)
}

// token mints a token with `ron token mint --scope S --data-dir DIR`.
func (n *node) token(scope string, more ...string) string {
	n.t.Helper()
	return mintCLI(n.t, n.dataDir, append([]string{"--scope", scope}, more...)...)
}

// mintCLI mints a token with `ron token mint --data-dir DIR flags…` from
// the root key in dataDir (no admin plane is asked) and returns it.
func mintCLI(t testing.TB, dataDir string, flags ...string) string {
	t.Helper()
	res := ron(t, cliOpts{}, append([]string{"token", "mint", "--data-dir", dataDir}, flags...)...)
	if res.code != 0 {
		t.Fatalf("ron token mint: exit %d: %s", res.code, res.stderr)
	}
	tok := strings.TrimSpace(res.stdout)
	if tok == "" || strings.ContainsAny(tok, " \n") {
		t.Fatalf("ron token mint printed %q on stdout (stderr %q)", res.stdout, res.stderr)
	}
	return tok
}

// metric returns the value of the first /metrics sample named name whose
// labels include every pair in labels ("k=\"v\""); -1 when absent.
func (n *node) metric(name string, labels ...string) float64 {
	n.t.Helper()
	resp, err := http.Get("http://" + n.admin + "/metrics")
	if err != nil {
		n.t.Fatalf("GET /metrics: %v", err)
	}
	defer resp.Body.Close()
	v := -1.0
	err = scanMetric(resp.Body, name, labels, func(x float64) bool { v = x; return false })
	if err != nil {
		n.t.Fatal(err)
	}
	return v
}

// scanMetric calls fn with the value of every /metrics sample in r named
// name whose labels include every pair in labels, until fn returns false.
func scanMetric(r io.Reader, name string, labels []string, fn func(float64) bool) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, name+"{") && !strings.HasPrefix(line, name+" ") {
			continue
		}
		sp := strings.LastIndexByte(line, ' ')
		match := true
		for _, l := range labels {
			match = match && strings.Contains(line[:sp], l)
		}
		if !match {
			continue
		}
		v, err := strconv.ParseFloat(line[sp+1:], 64)
		if err != nil {
			return fmt.Errorf("metric line %q: %v", line, err)
		}
		if !fn(v) {
			return nil
		}
	}
	return nil
}

// tmpEntries lists <data>/storage/tmp.
func (n *node) tmpEntries() []string {
	n.t.Helper()
	ents, err := os.ReadDir(filepath.Join(n.storageDir(), "tmp"))
	if err != nil {
		n.t.Fatalf("read tmp/: %v", err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

// partialTmp lists tmp/ entries other than the readiness probe's file.
func (n *node) partialTmp() []string {
	var out []string
	for _, name := range n.tmpEntries() {
		if !strings.HasPrefix(name, "probe-") {
			out = append(out, name)
		}
	}
	return out
}

// inventory pages through GET /inventory and returns id → size.
func (n *node) inventory(tok string) map[string]int64 {
	n.t.Helper()
	inv, err := n.listInventory(tok, 1000, time.Minute)
	if err != nil {
		n.t.Fatal(err)
	}
	return inv
}

// listInventory pages through GET /inventory, pageSize items a page, each
// request bounded by limit, and returns id → size; errors are returned.
func (n *node) listInventory(tok string, pageSize int, limit time.Duration) (map[string]int64, error) {
	out := map[string]int64{}
	after := ""
	for {
		u := n.url("/inventory?limit=" + strconv.Itoa(pageSize))
		if after != "" {
			u += "&after=" + after
		}
		r, err := clReq(limit, http.MethodGet, u, hdr("Authorization", "Bearer "+tok), nil)
		if err != nil {
			return nil, err
		}
		if r.status != http.StatusOK {
			return nil, fmt.Errorf("GET /inventory on %s: %d %.200s", n.name, r.status, r.body)
		}
		var page inventoryPage
		if err := json.Unmarshal(r.body, &page); err != nil {
			return nil, fmt.Errorf("inventory of %s: %v", n.name, err)
		}
		for _, it := range page.Items {
			out[it.ID] = it.Size
		}
		if page.Next == nil {
			return out, nil
		}
		after = *page.Next
	}
}

// cliOpts configure one CLI invocation.
type cliOpts struct {
	env    []string  // extra environment
	stdin  io.Reader // nil = empty
	stdout io.Writer // nil = captured in result.stdout
}

type cliResult struct {
	stdout, stderr string
	code           int
}

// ron runs the binary with args and returns its output and exit code.
func ron(t testing.TB, o cliOpts, args ...string) cliResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), cliLimit)
	defer cancel()
	cmd := exec.CommandContext(ctx, ronBin, args...)
	cmd.Dir = os.TempDir()
	cmd.Env = cleanEnv(o.env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr, cmd.Stdin = &stdout, &stderr, o.stdin
	if o.stdout != nil {
		cmd.Stdout = o.stdout
	}
	err := cmd.Run()
	res := cliResult{stdout: stdout.String(), stderr: stderr.String()}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		res.code = ee.ExitCode()
	default:
		t.Fatalf("ron %s: %v", strings.Join(args, " "), err)
	}
	if ctx.Err() != nil {
		t.Fatalf("ron %s: still running after %s", strings.Join(args, " "), cliLimit)
	}
	return res
}

// httpResult is a fully read response.
type httpResult struct {
	status int
	header http.Header
	body   []byte
	err    error // body read error (e.g. unexpected EOF)
}

func hdr(kv ...string) http.Header {
	h := http.Header{}
	for i := 0; i+1 < len(kv); i += 2 {
		h.Add(kv[i], kv[i+1])
	}
	return h
}

// httpClient never follows redirects and never asks for compression.
var httpClient = &http.Client{
	Timeout:       time.Minute,
	Transport:     &http.Transport{DisableCompression: true},
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

// do sends one request and reads the whole answer; a body read error is
// returned in the result, a transport error fails the test.
func do(t testing.TB, method, url string, h http.Header, body []byte) httpResult {
	t.Helper()
	r, err := send(context.Background(), method, url, h, body)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	return r
}

// clReq is do under its own deadline, for nodes that may not answer
// (killed, stopped): transport and body errors are returned.
func clReq(limit time.Duration, method, url string, h http.Header, body []byte) (httpResult, error) {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	r, err := send(ctx, method, url, h, body)
	if err != nil {
		return r, err
	}
	return r, r.err
}

// send sends one request through httpClient (whose idle connections
// TestMain closes before the leak check) and reads the whole answer; the
// error is the transport's, a body read error is in the result.
func send(ctx context.Context, method, url string, h http.Header, body []byte) (httpResult, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return httpResult{}, err
	}
	for k, vs := range h {
		req.Header[k] = vs
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		return httpResult{}, err
	}
	defer resp.Body.Close()
	data, rerr := io.ReadAll(resp.Body)
	return httpResult{status: resp.StatusCode, header: resp.Header, body: data, err: rerr}, nil
}

// envelope is the error envelope of docs/architecture.md §5.
type envelope struct {
	Error struct {
		Code        string         `json:"code"`
		Message     string         `json:"message"`
		CorrID      string         `json:"corr_id"`
		RetryAfterS int            `json:"retry_after_s"`
		Details     map[string]any `json:"details"`
	} `json:"error"`
}

// wantError checks status and error code of an envelope answer.
func wantError(t testing.TB, what string, r httpResult, status int, code string) envelope {
	t.Helper()
	var env envelope
	if r.status != status {
		t.Errorf("%s: status %d, want %d (body %s)", what, r.status, status, r.body)
		return env
	}
	if err := json.Unmarshal(r.body, &env); err != nil {
		t.Errorf("%s: body %q is not an error envelope: %v", what, r.body, err)
		return env
	}
	if env.Error.Code != code {
		t.Errorf("%s: code %q, want %q (body %s)", what, env.Error.Code, code, r.body)
	}
	if env.Error.CorrID == "" {
		t.Errorf("%s: envelope without corr_id: %s", what, r.body)
	}
	return env
}

// putReply is the JSON answer to a write.
type putReply struct {
	CID     string `json:"cid"`
	Size    int64  `json:"size"`
	Created bool   `json:"created"`
}

// post stores body with POST /o and returns the reply; status must be 201 or 200.
func (n *node) post(tok string, body []byte) putReply {
	n.t.Helper()
	r := do(n.t, http.MethodPost, n.url("/o"), hdr("Authorization", "Bearer "+tok), body)
	if r.status != http.StatusCreated && r.status != http.StatusOK {
		n.t.Fatalf("POST /o: %d %s", r.status, r.body)
	}
	var p putReply
	if err := json.Unmarshal(r.body, &p); err != nil {
		n.t.Fatalf("POST /o reply %q: %v", r.body, err)
	}
	if want := idOf(body); p.CID != want {
		n.t.Fatalf("POST /o: cid %s, want %s", p.CID, want)
	}
	return p
}

// idOf is the object id of data (independent of the product's hasher).
func idOf(data []byte) string {
	sum := blake3.Sum256(data)
	return "b3:" + hex.EncodeToString(sum[:])
}

// b3sum runs Debian's b3sum on path and returns "b3:" + its output. The
// tests fail, not skip, without it: scripts/test.sh installs it.
func b3sum(t testing.TB, path string) string {
	t.Helper()
	bin, err := exec.LookPath("b3sum")
	if err != nil {
		t.Fatalf("b3sum is not installed (Debian package b3sum; scripts/test.sh installs it): %v", err)
	}
	out, err := exec.Command(bin, "--no-names", path).Output()
	if err != nil {
		t.Fatalf("b3sum %s: %v", path, err)
	}
	return "b3:" + strings.TrimSpace(string(out))
}

// vector is the 102,400-byte input of docs/storage.md §1: byte i = i mod 251.
func vector() []byte {
	b := make([]byte, 102400)
	for i := range b {
		b[i] = byte(i % 251)
	}
	return b
}

const (
	vectorID  = "b3:bc3e3d41a1146b069abffad3c0d44860cf664390afce4d9661f7902e7943e085"
	emptyID   = "b3:af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262"
	bigSize   = 100 << 20
	mebibytes = 1 << 20
)

// randomBytes returns n deterministic pseudo-random bytes for seed.
func randomBytes(seed uint64, n int) []byte {
	b := make([]byte, n)
	r := rand.NewChaCha8([32]byte{byte(seed), byte(seed >> 8), byte(seed >> 16), byte(seed >> 24), 'r', 'o', 'n'})
	_, _ = r.Read(b)
	return b
}

// The 100 MiB file is shared by the tests that need one; it is written once.
var (
	bigFileOnce sync.Once
	bigFileDir  string
	bigFilePath string
	bigFileErr  error
)

// bigFile returns the path of a 100 MiB file of pseudo-random bytes.
func bigFile(t testing.TB) string {
	t.Helper()
	bigFileOnce.Do(func() {
		bigFileDir, bigFileErr = os.MkdirTemp("", "ron-e2e-big-")
		if bigFileErr != nil {
			return
		}
		bigFilePath = filepath.Join(bigFileDir, "big.bin")
		block := randomBytes(100, mebibytes)
		var f *os.File
		if f, bigFileErr = os.Create(bigFilePath); bigFileErr != nil {
			return
		}
		defer f.Close()
		w := bufio.NewWriterSize(f, mebibytes)
		for i := range bigSize / mebibytes {
			// Every MiB differs: a block-level dedup bug would show.
			block[0], block[1] = byte(i), byte(i>>8)
			if _, bigFileErr = w.Write(block); bigFileErr != nil {
				return
			}
		}
		bigFileErr = w.Flush()
	})
	if bigFileErr != nil {
		t.Fatalf("writing the 100 MiB file: %v", bigFileErr)
	}
	return bigFilePath
}

// sameFiles compares two files byte for byte without loading them whole.
func sameFiles(t testing.TB, a, b string) {
	t.Helper()
	fa, err := os.Open(a)
	if err != nil {
		t.Fatal(err)
	}
	defer fa.Close()
	fb, err := os.Open(b)
	if err != nil {
		t.Fatal(err)
	}
	defer fb.Close()
	ra, rb := bufio.NewReaderSize(fa, mebibytes), bufio.NewReaderSize(fb, mebibytes)
	bufA, bufB := make([]byte, mebibytes), make([]byte, mebibytes)
	var off int64
	for {
		na, ea := io.ReadFull(ra, bufA)
		nb, eb := io.ReadFull(rb, bufB)
		if na != nb || !bytes.Equal(bufA[:na], bufB[:nb]) {
			t.Fatalf("%s and %s differ in the MiB at offset %d (read %d vs %d bytes)", a, b, off, na, nb)
		}
		off += int64(na)
		if ea != nil || eb != nil {
			if (ea == io.EOF || ea == io.ErrUnexpectedEOF) && (eb == io.EOF || eb == io.ErrUnexpectedEOF) {
				return
			}
			t.Fatalf("comparing %s and %s: %v / %v", a, b, ea, eb)
		}
	}
}

// inventoryPage is one page of storage's GET /inventory.
type inventoryPage struct {
	Items []struct {
		ID   string `json:"id"`
		Size int64  `json:"size"`
	} `json:"items"`
	Next *string `json:"next"`
}

// readyzBody is the JSON of the admin plane's /readyz.
type readyzBody struct {
	Ready    bool     `json:"ready"`
	Missing  []string `json:"missing"`
	Degraded []string `json:"degraded"`
}
