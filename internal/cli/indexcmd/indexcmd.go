// Package indexcmd is the index role's commands, `ron name …` and `ron
// resolve` (docs/index.md §14): clients of an index server through the
// role's contract, roles/index/indexapi. It is a command package: the
// command tree (internal/cli/root) mounts it; no role imports it.
package indexcmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/httpx/client"
	"github.com/ronhq/ron/internal/cli"
	"github.com/ronhq/ron/roles/index/indexapi"
	"github.com/ronhq/ron/store"
)

// cliRole names the index in flags and in cli.Node.Listen.
const cliRole = indexapi.RoleName

// Commands returns the index role's CLI commands (docs/index.md §14):
// `name` with the subcommands set, get, rm and history, and `resolve`. They
// talk to --server (default: the configured local index listener), print
// the server's record or answer with -o json and a short text form
// otherwise, and exit 0 on success, 1 on failure or invalid arguments (a
// 412 prints "current version: N" or "current version: none" to stderr) and
// 2 when the server is unreachable.
func Commands(env cli.Env, getenv func(string) string) []*cobra.Command {
	name := &cobra.Command{
		Use:   "name",
		Short: "Manage name pointers: set, get, rm, history",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			return cli.Exit(cli.ExitFailure, errors.New("name needs a subcommand: set, get, rm or history"))
		},
	}
	name.AddCommand(nameSetCommand(env, getenv), nameGetCommand(env, getenv), nameRmCommand(env, getenv),
		nameHistoryCommand(env, getenv))
	return []*cobra.Command{name, resolveCommand(env, getenv)}
}

// newCLIClient builds the client a command uses; the token is asked once,
// on first use, and is optional for reads (cli.Flags.OnceToken).
func newCLIClient(env cli.Env, f *cli.Flags, getenv func(string) string, scope string) (*indexapi.HTTPClient, error) {
	base, err := f.ServerURL(env, cliRole)
	if err != nil {
		return nil, err
	}
	token := f.OnceToken(env, getenv, scope, scope == indexapi.ScopeRead)
	return indexapi.NewHTTPClient(base, token, client.Options{Role: "cli"}), nil
}

// run is the shared body of every index command: check -o, build the
// client, call, then print the answer as JSON or as text. Errors become
// exit codes; a 412 also prints the current version to stderr.
func run[T any](cmd *cobra.Command, env cli.Env, getenv func(string) string, f *cli.Flags, scope string,
	call func(context.Context, indexapi.Client) (T, error), text func(io.Writer, T) error) error {
	c, err := newCLIClient(env, f, getenv, scope)
	if err != nil {
		return cli.Classify(err)
	}
	defer c.Close()
	out, err := call(cmd.Context(), c)
	if err != nil {
		reportPrecondition(cmd.ErrOrStderr(), err)
		return cli.Classify(err)
	}
	if f.Output == "json" {
		return cli.PrintJSON(cmd.OutOrStdout(), out)
	}
	return text(cmd.OutOrStdout(), out)
}

// invalid marks an argument error (exit 1, before any request).
func invalid(err error) error { return cli.Exit(cli.ExitFailure, err) }

// reportPrecondition prints "current version: N" (or "none") for a 412.
func reportPrecondition(w io.Writer, err error) {
	var he *httpx.Error
	if !errors.As(err, &he) || he.Status != http.StatusPreconditionFailed {
		return
	}
	fmt.Fprintln(w, "current version:", versionText(he.Details["current_version"]))
}

// versionText renders details.current_version: a JSON number (float64
// after decoding) or null.
func versionText(v any) string {
	switch n := v.(type) {
	case float64:
		return strconv.FormatFloat(n, 'f', -1, 64)
	case uint64:
		return strconv.FormatUint(n, 10)
	case int:
		return strconv.Itoa(n)
	case nil:
		return "none"
	}
	return fmt.Sprint(v)
}

// writeCondFlags registers --if-version (and, for set, --create-only) and
// returns a function giving the Cond they ask for.
func writeCondFlags(cmd *cobra.Command, createOnly bool) func() (indexapi.Cond, error) {
	var ifVersion uint64
	var absent bool
	cmd.Flags().Uint64Var(&ifVersion, "if-version", 0, "apply only while the live version is N (If-Match)")
	if createOnly {
		cmd.Flags().BoolVar(&absent, "create-only", false, "apply only when the name has no live version (If-None-Match: *)")
		cmd.MarkFlagsMutuallyExclusive("if-version", "create-only")
	}
	return func() (indexapi.Cond, error) {
		switch {
		case cmd.Flags().Changed("if-version") && ifVersion == 0:
			return indexapi.Cond{}, errors.New("--if-version must be at least 1")
		case cmd.Flags().Changed("if-version"):
			return indexapi.IfMatch(ifVersion), nil
		case absent:
			return indexapi.IfAbsent(), nil
		}
		return indexapi.Cond{}, nil
	}
}

func nameSetCommand(env cli.Env, getenv func(string) string) *cobra.Command {
	var f cli.Flags
	cmd := &cobra.Command{
		Use:   "set NAME b3:… [--if-version N | --create-only]",
		Short: "Point NAME at an object id (adds a version)",
		Args:  cobra.ExactArgs(2),
	}
	cond := writeCondFlags(cmd, true)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if err := f.CheckOutput(); err != nil {
			return err
		}
		if err := indexapi.CheckName(args[0]); err != nil {
			return invalid(err)
		}
		target, err := store.ParseID(args[1])
		if err != nil {
			return invalid(err)
		}
		c, err := cond()
		if err != nil {
			return invalid(err)
		}
		return run(cmd, env, getenv, &f, indexapi.ScopeWrite, func(ctx context.Context, cl indexapi.Client) (indexapi.NameRecord, error) {
			return cl.SetName(ctx, args[0], target, c)
		}, printRecord)
	}
	f.Register(cmd, cliRole)
	return cmd
}

func nameGetCommand(env cli.Env, getenv func(string) string) *cobra.Command {
	var f cli.Flags
	cmd := &cobra.Command{
		Use:   "get NAME[@VERSION]",
		Short: "Print a name's live record, or one version of it",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := f.CheckOutput(); err != nil {
				return err
			}
			get, err := nameGetter(args[0])
			if err != nil {
				return invalid(err)
			}
			return run(cmd, env, getenv, &f, indexapi.ScopeRead, get, printRecord)
		},
	}
	f.Register(cmd, cliRole)
	return cmd
}

// nameGetter validates NAME or NAME@VERSION and returns the matching call.
func nameGetter(key string) (func(context.Context, indexapi.Client) (indexapi.NameRecord, error), error) {
	if !strings.Contains(key, "@") {
		if err := indexapi.CheckName(key); err != nil {
			return nil, err
		}
		return func(ctx context.Context, c indexapi.Client) (indexapi.NameRecord, error) { return c.GetName(ctx, key) }, nil
	}
	name, v, err := indexapi.ParseNameVersion(key)
	if err != nil {
		return nil, indexapi.InvalidInput(err)
	}
	return func(ctx context.Context, c indexapi.Client) (indexapi.NameRecord, error) {
		return c.GetNameVersion(ctx, name, v)
	}, nil
}

func nameRmCommand(env cli.Env, getenv func(string) string) *cobra.Command {
	var f cli.Flags
	cmd := &cobra.Command{
		Use:   "rm NAME [--if-version N]",
		Short: "Delete a name (writes a tombstone version)",
		Args:  cobra.ExactArgs(1),
	}
	cond := writeCondFlags(cmd, false)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if err := f.CheckOutput(); err != nil {
			return err
		}
		if err := indexapi.CheckName(args[0]); err != nil {
			return invalid(err)
		}
		c, err := cond()
		if err != nil {
			return invalid(err)
		}
		return run(cmd, env, getenv, &f, indexapi.ScopeWrite, func(ctx context.Context, cl indexapi.Client) (indexapi.NameDeletion, error) {
			return cl.DeleteName(ctx, args[0], c)
		}, func(w io.Writer, d indexapi.NameDeletion) error {
			_, err := fmt.Fprintf(w, "%s@%d  deleted  %s\n", d.Name, d.Version, d.UpdatedAt)
			return err
		})
	}
	f.Register(cmd, cliRole)
	return cmd
}

func nameHistoryCommand(env cli.Env, getenv func(string) string) *cobra.Command {
	var f cli.Flags
	cmd := &cobra.Command{
		Use:   "history NAME",
		Short: "List the kept versions of a name, newest first",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := f.CheckOutput(); err != nil {
				return err
			}
			if err := indexapi.CheckName(args[0]); err != nil {
				return invalid(err)
			}
			return run(cmd, env, getenv, &f, indexapi.ScopeRead, func(ctx context.Context, c indexapi.Client) (indexapi.NameHistory, error) {
				return c.History(ctx, args[0])
			}, printHistory)
		},
	}
	f.Register(cmd, cliRole)
	return cmd
}

func resolveCommand(env cli.Env, getenv func(string) string) *cobra.Command {
	var f cli.Flags
	var noCache bool
	cmd := &cobra.Command{
		Use:   "resolve KEY",
		Short: "Resolve a name, name@version or b3 id to its target and providers",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := f.CheckOutput(); err != nil {
				return err
			}
			if _, _, err := indexapi.ParseResolveKey(args[0]); err != nil {
				return invalid(err)
			}
			return run(cmd, env, getenv, &f, indexapi.ScopeRead, func(ctx context.Context, c indexapi.Client) (indexapi.ResolveAnswer, error) {
				return c.Resolve(ctx, args[0], noCache)
			}, printResolve)
		},
	}
	f.Register(cmd, cliRole)
	cmd.Flags().BoolVar(&noCache, "no-cache", false, "bypass the index's caches (Cache-Control: no-cache)")
	return cmd
}

// printRecord prints a live record on one line: name@version, target and
// update time.
func printRecord(w io.Writer, r indexapi.NameRecord) error {
	_, err := fmt.Fprintf(w, "%s@%d  %s  %s\n", r.Name, r.Version, r.B3, r.UpdatedAt)
	return err
}

// printHistory prints the kept versions, newest first as the server lists
// them, with "deleted" in place of the target of a tombstone.
func printHistory(w io.Writer, h indexapi.NameHistory) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "VERSION\tTARGET\tUPDATED")
	for _, v := range h.Versions {
		target := "deleted"
		if !v.Deleted && v.B3 != nil {
			target = *v.B3
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\n", v.Version, target, v.UpdatedAt)
	}
	return tw.Flush()
}

// printResolve prints the answer's fields, one per line, then its
// providers as a table.
func printResolve(w io.Writer, a indexapi.ResolveAnswer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "key\t%s\ntarget\t%s\nkind\t%s\n", a.Key, a.Target, a.Kind)
	if a.NameVersion != nil {
		fmt.Fprintf(tw, "version\t%d\n", *a.NameVersion)
	}
	fmt.Fprintf(tw, "source\t%s\n", a.Source)
	if a.Partial {
		fmt.Fprintln(tw, "partial\ttrue (the provider lookup ran out of time)")
	}
	fmt.Fprintf(tw, "providers\t%d\n", len(a.Providers))
	if err := tw.Flush(); err != nil || len(a.Providers) == 0 {
		return err
	}
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NODE\tADDR\tREGION\tTYPE\tLAST_SEEN_S\tEXPIRES_IN_S")
	for _, p := range a.Providers {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\n", p.Node, p.Addr, dash(p.Region), dash(p.Type), p.LastSeenS, p.ExpiresInS)
	}
	return tw.Flush()
}

// dash shows an empty field as "-".
func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
