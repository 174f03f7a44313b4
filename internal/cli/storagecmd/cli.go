// Package storagecmd is the storage role's command line: `ron put`, `get`,
// `cat` and `stat` (docs/storage.md §9), which talk to a storage listener,
// and `ron repair status|run|pace` (docs/cluster.md §9), which talk to the
// admin listener. It reaches storage only through its contract,
// roles/storage/storageapi (and the index only through
// roles/index/indexapi), never the role package itself; internal/cli/root
// mounts its commands.
package storagecmd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"

	"github.com/mattn/go-isatty"
	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	"github.com/ronhq/ron/httpx/client"
	"github.com/ronhq/ron/internal/cli"
	"github.com/ronhq/ron/roles/index/indexapi"
	"github.com/ronhq/ron/roles/storage/storageapi"
	"github.com/ronhq/ron/store"
	"github.com/ronhq/ron/store/manifest"
	"github.com/ronhq/ron/store/verified"
)

// progressThreshold: bars appear only for transfers above 1 MiB.
const progressThreshold = 1 << 20

// Commands returns the storage role's CLI commands: put, get, cat, stat.
func Commands(env cli.Env, getenv func(string) string) []*cobra.Command {
	return []*cobra.Command{putCommand(env, getenv), getCommand(env, getenv, false), getCommand(env, getenv, true), statCommand(env, getenv)}
}

// newCLIClient builds the HTTP client a command uses, with a token minted
// once on first use.
func newCLIClient(env cli.Env, f *cli.Flags, getenv func(string) string, scope string) (*storageapi.HTTPClient, error) {
	url, err := f.ServerURL(env, storageapi.RoleName)
	if err != nil {
		return nil, err
	}
	return storageapi.NewHTTPClient(url, cliToken(env, f, getenv, scope), client.Options{Role: "cli"}), nil
}

// cliToken returns a token source for scope, asked once; read scopes are
// optional (cli.Flags.OnceToken).
func cliToken(env cli.Env, f *cli.Flags, getenv func(string) string, scope string) func(context.Context) (string, error) {
	return f.OnceToken(env, getenv, scope, scope == storageapi.ScopeRead || scope == indexapi.ScopeRead)
}

func putCommand(env cli.Env, getenv func(string) string) *cobra.Command {
	var f cli.Flags
	var ctype string
	var recursive, verbose bool
	var meta []string
	cmd := &cobra.Command{
		Use:   "put FILE|-|-r DIR",
		Short: "Store a file (or stdin, or with -r a directory tree and its manifest) and print its id",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := f.CheckOutput(); err != nil {
				return err
			}
			c, err := newCLIClient(env, &f, getenv, storageapi.ScopeWrite)
			if err != nil {
				return cli.Classify(err)
			}
			var res storageapi.PutResult
			if recursive {
				res, err = putTree(cmd, c, args[0], meta, verbose)
			} else {
				res, err = putFile(cmd.Context(), cmd, c, args[0], ctype, true)
			}
			if err != nil {
				return cli.Classify(err)
			}
			if f.Output == "json" {
				return cli.PrintJSON(cmd.OutOrStdout(), res)
			}
			fmt.Fprintln(cmd.OutOrStdout(), res.CID)
			return nil
		},
	}
	f.Register(cmd, storageapi.RoleName)
	cmd.Flags().StringVar(&ctype, "type", "", "Content-Type to store (default: from the file extension; none for stdin)")
	cmd.Flags().BoolVarP(&recursive, "recursive", "r", false, "store every regular file under DIR, then its ManifestV1; print the manifest's id")
	cmd.Flags().BoolVarP(&verbose, "verbose", "v", false, "with -r: also print one `id path` line per file")
	cmd.Flags().StringArrayVar(&meta, "meta", nil, "with -r: manifest meta entry k=v (repeatable)")
	return cmd
}

// putFile streams a file with POST /o while hashing it locally and fails if
// the server's id differs from the local hash.
func putFile(ctx context.Context, cmd *cobra.Command, c storageapi.Client, path, ctype string, progress bool) (storageapi.PutResult, error) {
	in, size, err := openInput(cmd, path)
	if err != nil {
		return storageapi.PutResult{}, cli.Exit(cli.ExitFailure, err)
	}
	defer in.Close()
	if ctype == "" && path != "-" {
		ctype = manifest.GuessType(path)
	}
	hasher := store.NewHasher()
	var body io.Reader = in
	if progress {
		body = withProgress(cmd, in, size, "put")
	}
	res, err := c.Put(ctx, io.TeeReader(body, hasher), size, nil, ctype)
	if err != nil {
		return storageapi.PutResult{}, err
	}
	return res, checkStored(res, hasher)
}

// checkStored fails when the server's id differs from the local hash.
func checkStored(res storageapi.PutResult, h *store.Hasher) error {
	local := h.ID()
	if res.CID != local.String() {
		return cli.Exit(cli.ExitFailure, fmt.Errorf("server stored %s but the local hash is %s", res.CID, local))
	}
	return nil
}

// putTree stores every regular file under dir (manifest.DefaultConcurrency
// at a time), then the canonical ManifestV1 of the tree, whose id it returns:
// the same tree and meta always give the same id.
func putTree(cmd *cobra.Command, c storageapi.Client, dir string, metaKV []string, verbose bool) (storageapi.PutResult, error) {
	meta, err := parseMeta(metaKV)
	if err != nil {
		return storageapi.PutResult{}, cli.Exit(cli.ExitFailure, err)
	}
	var mu sync.Mutex
	var stored [][2]string // rel, id
	put := func(ctx context.Context, path, rel string) (store.ID, int64, string, error) {
		typ := manifest.GuessType(rel)
		res, err := putFile(ctx, cmd, c, path, typ, false)
		if err != nil {
			return store.ID{}, 0, "", err
		}
		id, err := store.ParseID(res.CID)
		mu.Lock()
		stored = append(stored, [2]string{rel, res.CID})
		mu.Unlock()
		return id, res.Size, typ, err
	}
	warn := func(s string) { fmt.Fprintln(cmd.ErrOrStderr(), "ron put -r:", s) }
	m, err := manifest.FromDir(cmd.Context(), dir, put, manifest.FromDirOptions{Meta: meta, Warn: warn})
	if err != nil {
		return storageapi.PutResult{}, err
	}
	doc, err := manifest.Encode(m)
	if err != nil {
		return storageapi.PutResult{}, cli.Exit(cli.ExitFailure, err)
	}
	hasher := store.NewHasher()
	res, err := c.Put(cmd.Context(), io.TeeReader(bytes.NewReader(doc), hasher), int64(len(doc)), nil, manifest.MediaType)
	if err == nil {
		err = checkStored(res, hasher)
	}
	if err == nil && verbose {
		sort.Slice(stored, func(i, j int) bool { return stored[i][0] < stored[j][0] })
		for _, e := range stored {
			fmt.Fprintln(cmd.OutOrStdout(), e[1], e[0])
		}
	}
	return res, err
}

// parseMeta turns --meta k=v flags into the manifest's meta.
func parseMeta(kvs []string) (map[string]string, error) {
	meta := map[string]string{}
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("--meta %q: want key=value", kv)
		}
		meta[k] = v
	}
	return meta, nil
}

func openInput(cmd *cobra.Command, path string) (io.ReadCloser, int64, error) {
	if path == "-" {
		return io.NopCloser(cmd.InOrStdin()), -1, nil
	}
	file, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	st, err := file.Stat()
	if err != nil || !st.Mode().IsRegular() {
		file.Close()
		return nil, 0, fmt.Errorf("%s is not a regular file", path)
	}
	return file, st.Size(), nil
}

// withProgress shows a bar on stderr when it is a TTY and the transfer is
// above 1 MiB (unknown size: the bar counts bytes).
func withProgress(cmd *cobra.Command, r io.Reader, size int64, what string) io.Reader {
	errw, ok := cmd.ErrOrStderr().(*os.File)
	if !ok || !isatty.IsTerminal(errw.Fd()) || (size >= 0 && size <= progressThreshold) {
		return r
	}
	bar := progressbar.NewOptions64(size, progressbar.OptionSetWriter(errw), progressbar.OptionShowBytes(true),
		progressbar.OptionSetDescription(what), progressbar.OptionClearOnFinish())
	pr := progressbar.NewReader(r, bar)
	return &pr
}

func getCommand(env cli.Env, getenv func(string) string, cat bool) *cobra.Command {
	var f cli.Flags
	var out, index string
	use, short := "get b3:… [--out FILE]", "Fetch an object, verify it, write it to FILE (or stdout)"
	if cat {
		use, short = "cat b3:…", "Fetch an object to stdout, verified, without progress"
	}
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := store.ParseID(args[0])
			if err != nil {
				return cli.Exit(cli.ExitFailure, err)
			}
			return cli.Classify(getObject(cmd, env, &f, getenv, id, out, !cat, index))
		},
	}
	f.Register(cmd, storageapi.RoleName)
	cmd.Flags().StringVar(&index, "index", "", "index base URL asked for other providers on a 404 "+
		"(default: the configured local index listener, when the node runs the index role)")
	if !cat {
		cmd.Flags().StringVar(&out, "out", "", "write to FILE (via FILE.part, renamed once verified)")
	}
	return cmd
}

// getObject streams an object to out (or stdout), every 64 KiB group proven
// against the id with the object's outboard before it is written; a
// mismatch fails and leaves no file behind (stdout has the verified prefix
// only). On a 404 it tries the providers the index knows
// (getFromProviders).
func getObject(cmd *cobra.Command, env cli.Env, f *cli.Flags, getenv func(string) string, id store.ID, out string,
	progress bool, index string) error {
	c, err := newCLIClient(env, f, getenv, storageapi.ScopeRead)
	if err != nil {
		return err
	}
	defer c.Close()
	body, info, err := c.Get(cmd.Context(), id)
	if storageapi.IsNotFound(err) {
		return getFromProviders(cmd, env, f, getenv, id, out, index, err)
	}
	if err != nil {
		return err
	}
	defer body.Close()
	tree, err := outboardFor(cmd.Context(), c, id)
	if err != nil {
		return err
	}
	var src io.Reader = body
	if progress {
		src = withProgress(cmd, body, info.Size, "get")
	}
	if out == "" {
		return copyVerified(cmd.OutOrStdout(), src, tree)
	}
	return writeFileVerified(out, func(w io.Writer) error { return copyVerified(w, src, tree) })
}

// outboardFor gets and parses id's outboard from the node the CLI reads
// from, whose GET of the object already answered. A 404 there means a ron
// older than the outboard: the error says so.
func outboardFor(ctx context.Context, c storageapi.Client, id store.ID) (verified.Tree, error) {
	ob, err := c.Outboard(ctx, id)
	if storageapi.IsNotFound(err) {
		return verified.Tree{}, cli.Exit(cli.ExitFailure, fmt.Errorf(
			"the storage node serves the object but no outboard to verify it with: it runs a ron without verified streaming; upgrade it"))
	}
	if err != nil {
		return verified.Tree{}, err
	}
	return verified.ParseTree(ob, id)
}

// copyVerified copies the object r streams to w, each group only once it
// was proven against the tree's id; a source that lies fails with the
// group it lied in.
func copyVerified(w io.Writer, r io.Reader, t verified.Tree) error {
	_, err := verified.NewReader(r, t, 0, t.Count()-1).WriteTo(w)
	if errors.Is(err, verified.ErrMismatch) || errors.Is(err, verified.ErrShort) || errors.Is(err, verified.ErrLong) {
		return cli.Exit(cli.ExitFailure, fmt.Errorf("%s: %w", t.ID, err))
	}
	return err
}

// writeFileVerified lets fill write FILE.part, which it syncs and renames to
// out once fill succeeds (fill verifies); on any failure it removes it.
func writeFileVerified(out string, fill func(io.Writer) error) error {
	part := out + ".part"
	file, err := os.OpenFile(part, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return cli.Exit(cli.ExitFailure, err)
	}
	err = fill(file)
	if err == nil {
		err = file.Sync()
	}
	if cerr := file.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(part, out)
	}
	if err != nil {
		os.Remove(part)
		return err
	}
	return nil
}

func statCommand(env cli.Env, getenv func(string) string) *cobra.Command {
	var f cli.Flags
	cmd := &cobra.Command{
		Use:   "stat b3:…",
		Short: "Print an object's id, size, type and chunk count",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := f.CheckOutput(); err != nil {
				return err
			}
			id, err := store.ParseID(args[0])
			if err != nil {
				return cli.Exit(cli.ExitFailure, err)
			}
			c, err := newCLIClient(env, &f, getenv, storageapi.ScopeRead)
			if err != nil {
				return cli.Classify(err)
			}
			info, err := c.Stat(cmd.Context(), id)
			if err != nil {
				return cli.Classify(err)
			}
			st := statReply{ID: id.String(), Size: info.Size, Type: info.ContentType, Chunks: store.ChunkCount(info.Size)}
			if f.Output == "json" {
				return cli.PrintJSON(cmd.OutOrStdout(), st)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "id      %s\nsize    %d\ntype    %s\nchunks  %d\n", st.ID, st.Size, st.Type, st.Chunks)
			return nil
		},
	}
	f.Register(cmd, storageapi.RoleName)
	return cmd
}

type statReply struct {
	ID     string `json:"id"`
	Size   int64  `json:"size"`
	Type   string `json:"type"`
	Chunks int    `json:"chunks"`
}
