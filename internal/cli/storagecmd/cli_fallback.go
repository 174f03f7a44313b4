package storagecmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/spf13/cobra"

	"github.com/ronhq/ron/httpx/client"
	"github.com/ronhq/ron/internal/cli"
	"github.com/ronhq/ron/roles/index/indexapi"
	"github.com/ronhq/ron/roles/storage/storageapi"
	"github.com/ronhq/ron/store"
	"github.com/ronhq/ron/store/verified"
	"github.com/ronhq/ron/store/verified/vfetch"
)

// Provider fallback of `ron get` (docs/storage.md §9, docs/cluster.md §7).
const (
	// metaTimeout bounds the index lookup and each outboard fetch.
	metaTimeout = 10 * time.Second
	// chunkProgress is how long a provider may take to deliver one 64 KiB
	// group.
	chunkProgress = 10 * time.Second
)

// indexURL is --index, else the configured local index listener; "" when
// the node has none or its config cannot be read (the 404 then stands).
func indexURL(env cli.Env, flag string) string {
	if flag != "" {
		return flag
	}
	n, err := env.Node()
	if err != nil || n.Listen[indexapi.RoleName] == "" {
		return ""
	}
	return "http://" + n.Listen[indexapi.RoleName]
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
	addrs, err := providersOf(ctx, base, cliToken(env, f, getenv, indexapi.ScopeRead), id)
	switch {
	case storageapi.IsNotFound(err):
		return cli.Exit(cli.ExitFailure, fmt.Errorf("%s: not on the server and the index knows no provider", id))
	case err != nil:
		return cli.Exit(cli.ExitFailure, fmt.Errorf("%s: not on the server; asking the index failed: %w", id, err))
	}
	pf := &providerFetch{id: id, token: cliToken(env, f, getenv, storageapi.ScopeRead)}
	if out == "" {
		return pf.run(ctx, addrs, cmd.OutOrStdout())
	}
	return writeFileVerified(out, func(w io.Writer) error { return pf.run(ctx, addrs, w) })
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
	if storageapi.IsNotFound(err) {
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
	addrs, err := indexapi.DecodeProviderAddrs(resp.Body, client.MaxJSONResponse)
	if err != nil {
		return nil, fmt.Errorf("index answer for the providers of %s: %w", id, err)
	}
	return addrs, nil
}

// providerFetch is the verified transfer of docs/storage.md §4 across
// providers: each provider's outboard, then its body from the first
// unwritten group; every 64 KiB group is proven against the id before it
// is written, so a lying provider writes nothing wrong (to a file or to
// stdout alike), and the next one resumes at the first unwritten group
// with a Range request. A group proven against the id is the object's own
// whatever outboard proved it, so providers' outboards may differ in their
// lies; the object is complete once a group proved to be the last one.
type providerFetch struct {
	id    store.ID
	token func(context.Context) (string, error)
	off   int64 // bytes verified and written: whole groups, or the object
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
			return nil
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

// from fetches the rest of the object from one provider into w. A provider
// that stalls for chunkProgress is given up.
func (p *providerFetch) from(ctx context.Context, addr string, w io.Writer) error {
	c := storageapi.NewHTTPClient(addr, p.token, client.Options{Role: "cli", Retries: -1})
	defer c.Close()
	tree, err := p.learnTree(ctx, c)
	if err != nil {
		return err
	}
	first := int(p.off / store.ChunkSize)
	if tree.Size == 0 { // proven by the id (ParseTree): nothing to read
		return nil
	}
	if first >= tree.Count() {
		return fmt.Errorf("the outboard states %d bytes, but %d are proven and the object goes on", tree.Size, p.off)
	}
	pctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stall := time.AfterFunc(chunkProgress, cancel)
	defer stall.Stop()
	body, err := p.open(pctx, c, tree)
	if err != nil {
		return err
	}
	defer body.Close()
	err = p.copyGroups(w, verified.NewReader(body, tree, first, tree.Count()-1), stall)
	if err != nil && pctx.Err() != nil && ctx.Err() == nil {
		err = fmt.Errorf("no progress for %s: %w", chunkProgress, err)
	}
	return err
}

// copyGroups writes rd's verified groups to w, each read within
// chunkProgress (stall cancels the read when it fires).
func (p *providerFetch) copyGroups(w io.Writer, rd *verified.Reader, stall *time.Timer) error {
	for {
		stall.Reset(chunkProgress)
		group, err := rd.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("group %d: %w", rd.Offset()/store.ChunkSize, err)
		}
		if _, err := w.Write(group); err != nil {
			return &writeError{err}
		}
		p.off += int64(len(group))
	}
}

// learnTree fetches and parses the provider's outboard. A 404 from a
// provider that holds the object (HEAD 200) is a ron from before verified
// streaming: vfetch.ErrNoOutboard, naming the fix.
func (p *providerFetch) learnTree(ctx context.Context, c *storageapi.HTTPClient) (verified.Tree, error) {
	ctx, cancel := context.WithTimeout(ctx, metaTimeout)
	defer cancel()
	ob, err := c.Outboard(ctx, p.id)
	if storageapi.IsNotFound(err) {
		if _, serr := c.Stat(ctx, p.id); serr == nil {
			return verified.Tree{}, vfetch.ErrNoOutboard
		}
	}
	if err != nil {
		return verified.Tree{}, err
	}
	tree, err := verified.ParseTree(ob, p.id)
	if err != nil {
		return verified.Tree{}, fmt.Errorf("invalid outboard: %w", err)
	}
	return tree, nil
}

// open starts GET /o/{b3} at the first unwritten byte: 200 from the start,
// else 206 with exactly that range.
func (p *providerFetch) open(ctx context.Context, c *storageapi.HTTPClient, tree verified.Tree) (io.ReadCloser, error) {
	want, wantRange := http.StatusOK, ""
	if p.off > 0 {
		size := tree.Size
		want, wantRange = http.StatusPartialContent, fmt.Sprintf("bytes %d-%d/%d", p.off, size-1, size)
	}
	resp, err := c.GetFrom(ctx, p.id, p.off)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != want || resp.Header.Get("Content-Range") != wantRange {
		resp.Body.Close()
		return nil, fmt.Errorf("answered %d %q to a read from byte %d", resp.StatusCode, resp.Header.Get("Content-Range"), p.off)
	}
	return resp.Body, nil
}
