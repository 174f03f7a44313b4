package storage

import (
	"bytes"
	"context"
	"errors"
	"io"
	"testing"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/httpx/client"
	"github.com/ronhq/ron/roles/storage/storageapi"
	"github.com/ronhq/ron/store"
	"github.com/ronhq/ron/store/storetest"
)

// clientImpl builds one implementation of Client against a running role.
type clientImpl struct {
	name string
	make func(t *testing.T, tr *testRole) storageapi.Client
}

// clientImpls are the two implementations every clientCase runs against.
var clientImpls = []clientImpl{
	{"local", func(t *testing.T, tr *testRole) storageapi.Client { return NewLocalClient(tr.Role) }},
	{"http", func(t *testing.T, tr *testRole) storageapi.Client {
		tok := tr.token(storageapi.ScopeWrite, storageapi.ScopeRead)
		h := storageapi.NewHTTPClient(tr.base, func(context.Context) (string, error) { return tok, nil },
			client.Options{Retries: -1})
		t.Cleanup(h.Close)
		return h
	}},
}

// clientCase is one row of the table shared by LocalClient and HTTPClient
// (docs/architecture.md §1): the same calls must give the same results and errors.
type clientCase struct {
	name string
	cfg  func(*Config)
	run  func(t *testing.T, tr *testRole, c storageapi.Client)
}

func TestClientTable(t *testing.T) {
	for _, tc := range clientCases {
		for _, impl := range clientImpls {
			t.Run(tc.name+"/"+impl.name, func(t *testing.T) {
				tr := startRole(t, tc.cfg)
				tc.run(t, tr, impl.make(t, tr))
			})
		}
	}
}

// opaque hides a reader's length so the size is unknown to both clients.
func opaque(b []byte) io.Reader { return io.MultiReader(bytes.NewReader(b)) }

var clientCases = []clientCase{
	{name: "hello round trip", run: func(t *testing.T, tr *testRole, c storageapi.Client) {
		id := mustID(t, helloID)
		res := mustPut(t, c, []byte("hello world"), nil, "text/plain")
		wantPut(t, res, storageapi.PutResult{CID: helloID, Size: 11, Created: true})
		wantPut(t, mustPut(t, c, []byte("hello world"), nil, "text/plain"), storageapi.PutResult{CID: helloID, Size: 11})
		wantPut(t, mustPut(t, c, []byte("hello world"), &id, ""), storageapi.PutResult{CID: helloID, Size: 11})
		wantGet(t, c, id, []byte("hello world"), "text/plain")
		wantStat(t, c, storageapi.ObjectInfo{ID: id, Size: 11, ContentType: "text/plain"})
		wantOutboard(t, c, id, []byte("hello world"))
	}},
	{name: "102400 vector with want", run: func(t *testing.T, tr *testRole, c storageapi.Client) {
		id := mustID(t, bigID)
		wantPut(t, mustPut(t, c, bigBody(), &id, ""), storageapi.PutResult{CID: bigID, Size: 102400, Created: true})
		wantGet(t, c, id, bigBody(), "application/octet-stream")
		wantStat(t, c, storageapi.ObjectInfo{ID: id, Size: 102400, ContentType: "application/octet-stream"})
		wantOutboard(t, c, id, bigBody())
	}},
	{name: "unknown size", run: func(t *testing.T, tr *testRole, c storageapi.Client) {
		res, err := c.Put(context.Background(), opaque(bigBody()), -1, nil, "")
		if err != nil {
			t.Fatal(err)
		}
		wantPut(t, res, storageapi.PutResult{CID: bigID, Size: 102400, Created: true})
	}},
	{name: "empty object", run: func(t *testing.T, tr *testRole, c storageapi.Client) {
		wantPut(t, mustPut(t, c, nil, nil, ""), storageapi.PutResult{CID: emptyID, Size: 0, Created: true})
		wantGet(t, c, mustID(t, emptyID), nil, "application/octet-stream")
		wantOutboard(t, c, mustID(t, emptyID), nil)
	}},
	{name: "want mismatch", run: func(t *testing.T, tr *testRole, c storageapi.Client) {
		want := mustID(t, bigID)
		_, err := c.Put(context.Background(), bytes.NewReader([]byte("hello world")), 11, &want, "")
		he := wantErr(t, err, 409, httpx.CodeHashMismatch)
		if he.Details["expected"] != bigID || he.Details["actual"] != helloID {
			t.Fatalf("details %v", he.Details)
		}
		_, err = c.Stat(context.Background(), mustID(t, helloID))
		wantErr(t, err, 404, httpx.CodeNotFound)
	}},
	{name: "not found", run: func(t *testing.T, tr *testRole, c storageapi.Client) {
		id := mustID(t, helloID)
		_, _, err := c.Get(context.Background(), id)
		wantErr(t, err, 404, httpx.CodeNotFound)
		_, err = c.Stat(context.Background(), id)
		wantErr(t, err, 404, httpx.CodeNotFound)
		_, err = c.Outboard(context.Background(), id)
		wantErr(t, err, 404, httpx.CodeNotFound)
	}},
	{name: "too large", cfg: func(c *Config) { c.MaxObjectBytes = 10 }, run: func(t *testing.T, tr *testRole, c storageapi.Client) {
		_, err := c.Put(context.Background(), bytes.NewReader([]byte("hello world")), 11, nil, "")
		wantErr(t, err, 413, httpx.CodePayloadTooLarge)
		_, err = c.Put(context.Background(), opaque([]byte("hello world")), -1, nil, "")
		wantErr(t, err, 413, httpx.CodePayloadTooLarge)
		wantPut(t, mustPut(t, c, []byte("0123456789"), nil, ""), storageapi.PutResult{CID: store.Sum([]byte("0123456789")).String(), Size: 10, Created: true})
	}},
	{name: "quarantined", run: func(t *testing.T, tr *testRole, c storageapi.Client) {
		id := mustID(t, helloID)
		mustPut(t, c, []byte("hello world"), nil, "")
		if err := tr.engine.Quarantine(context.Background(), id, "test"); err != nil {
			t.Fatal(err)
		}
		_, _, err := c.Get(context.Background(), id)
		wantQuarantined(t, err)
		_, err = c.Stat(context.Background(), id)
		wantQuarantined(t, err)
		_, err = c.Outboard(context.Background(), id)
		wantQuarantined(t, err)
	}},
	{name: "corrupt first chunk", run: func(t *testing.T, tr *testRole, c storageapi.Client) {
		id := mustID(t, helloID)
		mustPut(t, c, []byte("hello world"), nil, "")
		flipByte(t, tr, id, 0)
		_, _, err := c.Get(context.Background(), id)
		wantErr(t, err, 500, httpx.CodeCorrupt)
		_, err = c.Stat(context.Background(), id)
		wantQuarantined(t, err)
	}},
	{name: "memory engine full", cfg: func(c *Config) { c.Engine = "memory"; c.MemoryMaxBytes = 1000 },
		run: func(t *testing.T, tr *testRole, c storageapi.Client) {
			_, err := c.Put(context.Background(), bytes.NewReader(bigBody()), 102400, nil, "")
			wantErr(t, err, 507, httpx.CodeInsufficientStorage)
			_, err = c.Put(context.Background(), opaque(bigBody()), -1, nil, "")
			wantErr(t, err, 507, httpx.CodeInsufficientStorage)
			wantPut(t, mustPut(t, c, []byte("hello world"), nil, ""), storageapi.PutResult{CID: helloID, Size: 11, Created: true})
		}},
	{name: "content types", run: func(t *testing.T, tr *testRole, c storageapi.Client) {
		_, err := c.Put(context.Background(), bytes.NewReader(nil), 0, nil, "multipart/form-data; boundary=x")
		wantErr(t, err, 415, httpx.CodeUnsupportedMedia)
		_, err = c.Put(context.Background(), bytes.NewReader(nil), 0, nil, "text/plain; charset")
		wantErr(t, err, 400, httpx.CodeBadRequest)
		_, err = c.Put(context.Background(), bytes.NewReader(nil), 0, nil, "text/"+string(bytes.Repeat([]byte("a"), 300)))
		wantErr(t, err, 400, httpx.CodeBadRequest)
		mustPut(t, c, []byte("hello world"), nil, "application/x-www-form-urlencoded")
		wantStat(t, c, storageapi.ObjectInfo{ID: mustID(t, helloID), Size: 11, ContentType: "application/octet-stream"})
	}},
	{name: "draining", run: func(t *testing.T, tr *testRole, c storageapi.Client) {
		mustPut(t, c, []byte("hello world"), nil, "")
		tr.Drain()
		_, err := c.Put(context.Background(), bytes.NewReader([]byte("x")), 1, nil, "")
		if he := wantErr(t, err, 503, httpx.CodeDraining); he.RetryAfter != 5 {
			t.Fatalf("retry after %d", he.RetryAfter)
		}
		wantGet(t, c, mustID(t, helloID), []byte("hello world"), "application/octet-stream")
	}},
	{name: "not ready", run: func(t *testing.T, tr *testRole, c storageapi.Client) {
		tr.lastProbe.Store(0)
		_, err := c.Put(context.Background(), bytes.NewReader([]byte("x")), 1, nil, "")
		wantErr(t, err, 503, httpx.CodeNotReady)
	}},
	{name: "busy", cfg: func(c *Config) { c.QueueCapacity = 1 }, run: func(t *testing.T, tr *testRole, c storageapi.Client) {
		release, err := tr.work.enter(context.Background(), tr.work.put)
		if err != nil {
			t.Fatal(err)
		}
		defer release()
		_, err = c.Put(context.Background(), bytes.NewReader([]byte("x")), 1, nil, "")
		wantErr(t, err, 429, httpx.CodeBusy)
		_, err = c.Stat(context.Background(), mustID(t, helloID))
		wantErr(t, err, 429, httpx.CodeBusy)
	}},
}

func mustPut(t *testing.T, c storageapi.Client, body []byte, want *store.ID, ctype string) storageapi.PutResult {
	t.Helper()
	res, err := c.Put(context.Background(), bytes.NewReader(body), int64(len(body)), want, ctype)
	if err != nil {
		t.Fatalf("put: %v", err)
	}
	return res
}

func wantPut(t *testing.T, got, want storageapi.PutResult) {
	t.Helper()
	if got != want {
		t.Fatalf("put = %+v, want %+v", got, want)
	}
}

func wantGet(t *testing.T, c storageapi.Client, id store.ID, want []byte, ctype string) {
	t.Helper()
	body, info, err := c.Get(context.Background(), id)
	if err != nil {
		t.Fatalf("get: %v", err)
	}
	defer body.Close()
	got, err := io.ReadAll(body)
	if err != nil {
		t.Fatalf("get body: %v", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("get: %d bytes differ from the %d stored", len(got), len(want))
	}
	if info != (storageapi.ObjectInfo{ID: id, Size: int64(len(want)), ContentType: ctype}) {
		t.Fatalf("get info %+v", info)
	}
}

func wantStat(t *testing.T, c storageapi.Client, want storageapi.ObjectInfo) {
	t.Helper()
	got, err := c.Stat(context.Background(), want.ID)
	if err != nil {
		t.Fatalf("stat: %v", err)
	}
	if got != want {
		t.Fatalf("stat %+v, want %+v", got, want)
	}
}

// wantOutboard checks that c serves data's outboard for id.
func wantOutboard(t *testing.T, c storageapi.Client, id store.ID, data []byte) {
	t.Helper()
	got, err := c.Outboard(context.Background(), id)
	if err != nil {
		t.Fatalf("outboard: %v", err)
	}
	if !bytes.Equal(got, storetest.ExpectedOutboard(data)) {
		t.Fatalf("outboard %x, want %x", got, storetest.ExpectedOutboard(data))
	}
}

// wantErr checks that err is an *httpx.Error with status and code.
func wantErr(t *testing.T, err error, status int, code string) *httpx.Error {
	t.Helper()
	var he *httpx.Error
	if !errors.As(err, &he) {
		t.Fatalf("error %v (%T), want *httpx.Error %d %s", err, err, status, code)
	}
	if he.Status != status || he.Code != code {
		t.Fatalf("error %d %s (%v), want %d %s", he.Status, he.Code, he, status, code)
	}
	return he
}

func wantQuarantined(t *testing.T, err error) {
	t.Helper()
	if he := wantErr(t, err, 404, httpx.CodeNotFound); he.Details["reason"] != "quarantined" {
		t.Fatalf("details %v", he.Details)
	}
}

// flipByte corrupts byte off of id's data file in the fs engine.
func flipByte(t *testing.T, tr *testRole, id store.ID, off int64) {
	t.Helper()
	flipFileByte(t, objectPath(tr.opt.DataDir, id), off)
}

// TestLocalGetVerifiesChunks: LocalClient.Get reads through the same
// verifying chunk reader as GET: a corrupt later chunk fails Read with 500
// corrupt (HTTP cuts the stream short), quarantines and counts.
func TestLocalGetVerifiesChunks(t *testing.T) {
	tr := startRole(t, nil)
	c := NewLocalClient(tr.Role)
	mustPut(t, c, bigBody(), nil, "")
	id := mustID(t, bigID)
	wantGet(t, c, id, bigBody(), "application/octet-stream")
	if got := tr.metric(series("storage_chunks_verified_total")); got != 2 {
		t.Fatalf("chunks_verified_total = %v", got)
	}
	flipByte(t, tr, id, 70000)
	body, _, err := c.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	defer body.Close()
	got, err := io.ReadAll(body)
	wantErr(t, err, 500, httpx.CodeCorrupt)
	if len(got) != store.ChunkSize {
		t.Fatalf("read %d bytes before the corrupt chunk", len(got))
	}
	if tr.metric(series("storage_corruptions_total", "kind", "data")) != 1 {
		t.Fatal("corruption not counted")
	}
	_, err = c.Stat(context.Background(), id)
	wantQuarantined(t, err)
}

// TestLocalGetHoldsSlot: the body holds its GET pool slot until closed.
func TestLocalGetHoldsSlot(t *testing.T) {
	tr := startRole(t, func(c *Config) { c.QueueCapacity = 1 })
	c := NewLocalClient(tr.Role)
	mustPut(t, c, []byte("hello world"), nil, "")
	body, _, err := c.Get(context.Background(), mustID(t, helloID))
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Stat(context.Background(), mustID(t, helloID))
	wantErr(t, err, 429, httpx.CodeBusy)
	if got := tr.metric(series("busy_rejections_total", "endpoint", "/o/{b3}")); got != 1 {
		t.Fatalf("busy_rejections_total = %v", got)
	}
	body.Close()
	body.Close()
	wantStat(t, c, storageapi.ObjectInfo{ID: mustID(t, helloID), Size: 11, ContentType: "application/octet-stream"})
	ctx, cancel := context.WithCancel(context.Background())
	body, _, err = c.Get(ctx, mustID(t, helloID))
	if err != nil {
		t.Fatal(err)
	}
	defer body.Close()
	cancel()
	if _, err := body.Read(make([]byte, 4)); !errors.Is(err, context.Canceled) {
		t.Fatalf("read after cancel: %v", err)
	}
}
