// Package registrycmd is the `ron registry …` command tree (docs/registry.md
// §9): keygen, init, propose, approve, commit, head, get and verify. The
// client commands talk to a registry through its contract,
// roles/registry/registryapi; verify runs the independent verifier
// roles/registry/verify; init and approve's default key use the registry's
// on-disk layout, roles/registry/regstore. It never imports the role
// package roles/registry.
package registrycmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/httpx/client"
	"github.com/ronhq/ron/internal/cli"
	"github.com/ronhq/ron/roles/registry/registryapi"
	"github.com/ronhq/ron/roles/registry/verify"
)

// cliTimeout bounds one client command's work against the server (the
// HTTP client also bounds each attempt).
const cliTimeout = 2 * time.Minute

// Error codes the CLI prints for failures that carry no envelope code.
const (
	cliCodeUsage       = httpx.CodeBadRequest // invalid arguments or input files
	cliCodeUnreachable = "unreachable"
	cliCodeVerify      = "verify_failed"
	cliCodeFailed      = "failed"
)

// Commands returns `ron registry` (docs/registry.md §9) with the
// subcommands keygen, init, propose, approve, commit, head, get and verify.
// Commands that talk to a registry use --server (default: the configured
// local listener), --token (else $RON_TOKEN, else a token minted on the
// node) and -o text|json. Every failure prints "error: <code>: <message>"
// to stderr and exits 1, or 2 when the server is unreachable.
func Commands(env cli.Env, getenv func(string) string) []*cobra.Command {
	reg := &cobra.Command{
		Use:   "registry",
		Short: "Registry: keys, bootstrap, propose/approve/commit, reads and the independent verifier",
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return report(cmd, usage(fmt.Errorf("unknown command %q for \"ron registry\"", args[0])))
			}
			return report(cmd, usage(errors.New("registry needs a subcommand: keygen, init, propose, approve, commit, head, get or verify")))
		},
	}
	reg.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error { return report(cmd, usage(err)) })
	reg.AddCommand(keygenCommand(), initCommand(env), proposeCommand(env, getenv), approveCommand(env, getenv),
		commitCommand(env, getenv), headCommand(env, getenv), getCommand(env, getenv), verifyCommand())
	return []*cobra.Command{reg}
}

// codedError is a failure with the code the CLI prints.
type codedError struct {
	code string
	err  error
}

func (e *codedError) Error() string { return e.code + ": " + e.err.Error() }
func (e *codedError) Unwrap() error { return e.err }

// usage marks invalid arguments or input (exit 1, before any request).
func usage(err error) error { return &codedError{code: cliCodeUsage, err: err} }

// failed marks a failure with code.
func failed(code string, err error) error { return &codedError{code: code, err: err} }

// report prints err as "error: <code>: <message>" and returns it wrapped
// with its exit code: 2 when the registry is unreachable, else 1.
func report(cmd *cobra.Command, err error) error {
	if err == nil {
		return nil
	}
	code, msg, exit := describe(err)
	fmt.Fprintf(cmd.ErrOrStderr(), "error: %s: %s\n", code, msg)
	return cli.Reported(exit, &codedError{code: code, err: errors.New(msg)})
}

// describe picks the code, message and exit code of err.
func describe(err error) (code, msg string, exit int) {
	var (
		ce *codedError
		he *httpx.Error
		m  *verify.Mismatch
		ue *verify.UnreachableError
	)
	switch {
	case client.IsUnreachable(err) || errors.As(err, &ue):
		return cliCodeUnreachable, err.Error(), cli.ExitUnreachable
	case errors.As(err, &ce):
		return ce.code, ce.err.Error(), cli.ExitFailure
	case errors.Is(err, verify.ErrOptions):
		return cliCodeUsage, err.Error(), cli.ExitFailure
	case errors.As(err, &m):
		return cliCodeVerify, m.Error(), cli.ExitFailure
	case errors.As(err, &he) && error(he) == err:
		return he.Code, envelopeMessage(he), cli.ExitFailure
	case errors.As(err, &he):
		return he.Code, err.Error(), cli.ExitFailure // wrapped: keep the context
	}
	return cliCodeFailed, err.Error(), cli.ExitFailure
}

// envelopeMessage is an envelope's message followed by its details, if
// any, as compact JSON.
func envelopeMessage(he *httpx.Error) string {
	if len(he.Details) == 0 {
		return he.Message
	}
	d, err := json.Marshal(he.Details)
	if err != nil {
		return he.Message
	}
	return he.Message + " " + string(d)
}

// exactArgs is cobra.ExactArgs reporting like every other failure.
func exactArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := cobra.ExactArgs(n)(cmd, args); err != nil {
			return report(cmd, usage(err))
		}
		return nil
	}
}

// checkOutput validates -o.
func checkOutput(output string) error {
	if output != "text" && output != "json" {
		return usage(fmt.Errorf("-o must be text or json, not %q", output))
	}
	return nil
}

// newCLIClient builds the HTTP client of a command for scope; the token is
// asked once, on first use, and is optional for reads (cli.Flags.OnceToken).
func newCLIClient(env cli.Env, f *cli.Flags, getenv func(string) string, scope string) (*registryapi.HTTPClient, error) {
	base, err := f.ServerURL(env, registryapi.RoleName)
	if err != nil {
		return nil, err
	}
	token := f.OnceToken(env, getenv, scope, scope == registryapi.ScopeRead)
	return registryapi.NewHTTPClient(base, token, client.Options{Role: "cli"}), nil
}

// call is one request of a client command to the registry.
type call[T any] func(context.Context, registryapi.Client) (T, error)

// clientCommand is a command that calls the registry once: it checks -o,
// then prepare turns the arguments into the call (its error is reported as
// it is: wrap usage errors with usage), then runClient runs it with a token
// for scope and prints the answer with show. nargs is the exact number of
// arguments.
func clientCommand[T any](env cli.Env, getenv func(string) string, use, short string, nargs int, scope string,
	prepare func(args []string) (call[T], error), show func(io.Writer, T, bool) error) *cobra.Command {
	var f cli.Flags
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Args:  exactArgs(nargs),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(f.Output); err != nil {
				return report(cmd, err)
			}
			c, err := prepare(args)
			if err != nil {
				return report(cmd, err)
			}
			return runClient(cmd, env, getenv, &f, scope, c, show)
		},
	}
	f.Register(cmd, registryapi.RoleName)
	return cmd
}

// runClient is the shared body of the commands that call the registry:
// build the client, call under cliTimeout, print the answer.
func runClient[T any](cmd *cobra.Command, env cli.Env, getenv func(string) string, f *cli.Flags, scope string,
	do call[T], show func(io.Writer, T, bool) error) error {
	c, err := newCLIClient(env, f, getenv, scope)
	if err != nil {
		return report(cmd, err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(cmd.Context(), cliTimeout)
	defer cancel()
	out, err := do(ctx, c)
	if err != nil {
		return report(cmd, err)
	}
	return report(cmd, show(cmd.OutOrStdout(), out, f.Output == "json"))
}

// printJSON prints v as one compact line (text) or indented (json).
func printJSON[T any](w io.Writer, v T, indent bool) error {
	if indent {
		return cli.PrintJSON(w, v)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}
