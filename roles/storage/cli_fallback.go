package storage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/ronhq/ron/httpx/client"
	"github.com/ronhq/ron/roles/cli"
	"github.com/ronhq/ron/store"
	"github.com/ronhq/ron/store/verified"
)

// Provider fallback of `ron get` (docs/storage.md §9, docs/cluster.md §7).
const (
	indexRole      = "index"
	scopeIndexRead = "index:read"
	// metaTimeout bounds the index lookup and each chunk-list fetch.
	metaTimeout = 10 * time.Second
	// chunkProgress is how long a provider may take to deliver one chunk.
	chunkProgress = 10 * time.Second
)

// indexURL is --index, else the configured local index listener; "" when
// the node has none or its config cannot be read (the 404 then stands).
func indexURL(env cli.Env, flag string) string {
	if flag != "" {
		return flag
	}
	n, err := env.Node()
	if err != nil || n.Listen[indexRole] == "" {
		return ""
	}
	return "http://" + n.Listen[indexRole]
}

// getFromProviders answers the server's 404 (notFound) by asking the index
// for id's providers and fetching from them in order, first verified
// success wins. Every failure here exits 1: the server itself answered.
func getFromProviders(cmd *cobra.Command, env cli.Env, f *cli.Flags, getenv func(string) string, id store.ID,
	out, index string, notFound error) error {
	base := indexURL(env, index)
	if base == "" {
		return notFound
	}
	ctx := cmd.Context()
	addrs, err := providersOf(ctx, base, cliToken(env, f, getenv, scopeIndexRead), id)
	switch {
	case IsNotFound(err):
		return cli.Exit(cli.ExitFailure, fmt.Errorf("%s: not on the server and the index knows no provider", id))
	case err != nil:
		return cli.Exit(cli.ExitFailure, fmt.Errorf("%s: not on the server; asking the index failed: %w", id, err))
	}
	pf := &providerFetch{id: id, token: cliToken(env, f, getenv, scopeRead), whole: store.NewHasher()}
	if out == "" {
		return pf.run(ctx, addrs, cmd.OutOrStdout())
	}
	return writeFileVerified(out, func(w io.Writer) error {
		if file, ok := w.(*os.File); ok {
			pf.rewind = func() error { return rewindFile(file) }
		}
		return pf.run(ctx, addrs, w)
	})
}

// rewindFile empties f and moves its offset to the start.
func rewindFile(f *os.File) error {
	if err := f.Truncate(0); err != nil {
		return err
	}
	_, err := f.Seek(0, io.SeekStart)
	return err
}

// providersOf returns the base URLs of id's providers in the index's order
// (GET /providers/{b3}). A "not found" is asked once more past the index's
// caches (Cache-Control: no-cache): the index may hold a negative answer
// from before the object's copies were announced, a moment after its write.
func providersOf(ctx context.Context, base string, token func(context.Context) (string, error), id store.ID) ([]string, error) {
	c := client.New(client.Options{BaseURL: base, Token: token, Role: "cli"})
	defer c.Close()
	ctx, cancel := context.WithTimeout(ctx, metaTimeout)
	defer cancel()
	addrs, err := listProviders(ctx, c, id, false)
	if IsNotFound(err) {
		addrs, err = listProviders(ctx, c, id, true)
	}
	return addrs, err
}

// listProviders asks the index once; noCache bypasses its caches.
func listProviders(ctx context.Context, c *client.Client, id store.ID, noCache bool) ([]string, error) {
	h := http.Header{"Accept": {"application/json"}}
	if noCache {
		h.Set("Cache-Control", "no-cache")
	}
	resp, err := c.Do(ctx, &client.Request{Path: "/providers/" + id.String(), Header: h, Op: "GET /providers/{b3}"})
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	addrs, err := decodeProviderAddrs(resp.Body, client.MaxJSONResponse)
	if err != nil {
		return nil, fmt.Errorf("index answer for the providers of %s: %w", id, err)
	}
	return addrs, nil
}

// providerFetch is the verified transfer of docs/storage.md §4 across
// providers: the first valid chunk list fixes size and chunk hashes; every
// chunk is checked before it is written, so a bad provider writes nothing
// wrong, and the next one resumes at the first unwritten chunk with a
// Range request. The whole digest is checked at the end: a provider whose
// list matches its own wrong bytes is caught only there, and then counts as
// failed when the destination can be rewound (a file); bytes already
// written to a stream cannot be taken back (known v1 limit, docs/storage.md §4).
type providerFetch struct {
	id     store.ID
	token  func(context.Context) (string, error)
	rewind func() error // empties the destination; nil for a stream
	whole  *store.Hasher
	list   *verified.List // nil until a provider gave a valid list
	off    int64          // bytes verified and written
}

// writeError is a failure of the destination, not of a provider.
type writeError struct{ err error }

func (e *writeError) Error() string { return "write: " + e.err.Error() }
func (e *writeError) Unwrap() error { return e.err }

// run tries addrs in order until one completes the object.
func (p *providerFetch) run(ctx context.Context, addrs []string, w io.Writer) error {
	var last error = errors.New("the index listed none")
	tried := 0
	for _, addr := range addrs {
		if ctx.Err() != nil {
			break
		}
		tried++
		err := p.from(ctx, addr, w)
		if err == nil {
			err = p.check()
		}
		if err == nil {
			return nil
		}
		if wholeMismatch(err) {
			// The provider's list matched its own wrong bytes: everything
			// written is suspect. A file starts afresh; a stream cannot.
			if p.rewind == nil {
				return cli.Exit(cli.ExitFailure, fmt.Errorf("%s: digest mismatch: %w", addr, err))
			}
			if rerr := p.restart(); rerr != nil {
				return cli.Exit(cli.ExitFailure, rerr)
			}
		}
		var we *writeError
		if errors.As(err, &we) {
			return cli.Exit(cli.ExitFailure, err)
		}
		last = fmt.Errorf("%s: %w", addr, err)
	}
	return cli.Exit(cli.ExitFailure, fmt.Errorf("%s: not on the server; %d provider(s) tried, none served it verified (last: %v)",
		p.id, tried, last))
}

// wholeMismatch reports whether err is a whole-digest mismatch (the
// verified reader's, or check's after a resumed read).
func wholeMismatch(err error) bool {
	var me *verified.MismatchError
	return (errors.As(err, &me) && me.Chunk < 0) || errors.Is(err, errDigest)
}

// errDigest marks check's digest mismatch.
var errDigest = errors.New("digest mismatch")

// check compares the whole digest with the id.
func (p *providerFetch) check() error {
	if got, _, _ := p.whole.Sum(); got != p.id {
		return fmt.Errorf("%w: got %s, want %s", errDigest, got, p.id)
	}
	return nil
}

// restart forgets the chunk list and everything written, after a whole
// digest mismatch, so that the next provider starts afresh.
func (p *providerFetch) restart() error {
	if err := p.rewind(); err != nil {
		return &writeError{err}
	}
	p.whole, p.list, p.off = store.NewHasher(), nil, 0
	return nil
}

// from fetches the rest of the object from one provider into w. A provider
// that stalls for chunkProgress is given up.
func (p *providerFetch) from(ctx context.Context, addr string, w io.Writer) error {
	c := NewHTTPClient(addr, p.token, client.Options{Role: "cli", Retries: -1})
	defer c.c.Close()
	if p.list == nil {
		if err := p.learnChunks(ctx, c); err != nil {
			return err
		}
	}
	if p.off == p.list.Size {
		return nil
	}
	pctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stall := time.AfterFunc(chunkProgress, cancel)
	defer stall.Stop()
	body, err := p.open(pctx, c)
	if err != nil {
		return err
	}
	defer body.Close()
	rd := verified.NewReader(body, *p.list, int(p.off/store.ChunkSize), p.list.Count()-1, p.off == 0)
	for {
		stall.Reset(chunkProgress)
		chunk, err := rd.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			if pctx.Err() != nil && ctx.Err() == nil {
				err = fmt.Errorf("no progress for %s", chunkProgress)
			}
			return fmt.Errorf("chunk %d: %w", rd.Offset()/store.ChunkSize, err)
		}
		if _, err := w.Write(chunk); err != nil {
			return &writeError{err}
		}
		p.whole.Write(chunk)
		p.off += int64(len(chunk))
	}
}

// learnChunks fetches and checks the provider's chunk list.
func (p *providerFetch) learnChunks(ctx context.Context, c *HTTPClient) error {
	ctx, cancel := context.WithTimeout(ctx, metaTimeout)
	defer cancel()
	l, err := c.Chunks(ctx, p.id)
	if err != nil {
		return err
	}
	list, err := verified.FromFields(p.id, l.ID, l.Size, l.ChunkSize, l.Chunks)
	if err != nil {
		return fmt.Errorf("invalid chunk list: %w", err)
	}
	p.list = &list
	return nil
}

// open starts GET /o/{b3} at the first unwritten byte: 200 from the start,
// else 206 with exactly that range.
func (p *providerFetch) open(ctx context.Context, c *HTTPClient) (io.ReadCloser, error) {
	req := &client.Request{Path: "/o/" + p.id.String(), Op: "get", Header: http.Header{}}
	want, wantRange := http.StatusOK, ""
	if p.off > 0 {
		size := p.list.Size
		want, wantRange = http.StatusPartialContent, fmt.Sprintf("bytes %d-%d/%d", p.off, size-1, size)
		req.Header.Set("Range", fmt.Sprintf("bytes=%d-", p.off))
	}
	resp, err := c.c.Do(ctx, req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != want || resp.Header.Get("Content-Range") != wantRange {
		resp.Body.Close()
		return nil, fmt.Errorf("answered %d %q to a read from byte %d", resp.StatusCode, resp.Header.Get("Content-Range"), p.off)
	}
	return resp.Body, nil
}
