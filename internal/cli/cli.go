// Package cli is the plumbing every ron client command shares: the --server,
// --token and -o flags, token acquisition on the node, output formats and
// exit codes.
package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/httpx/auth"
	"github.com/ronhq/ron/httpx/client"
)

// Exit codes of client commands (docs/storage.md §9, docs/architecture.md §7).
const (
	ExitOK          = 0
	ExitFailure     = 1
	ExitUnreachable = 2
)

// ExitError carries a process exit code up to main. Reported means the
// command has already printed the error, so main prints nothing more.
type ExitError struct {
	Code     int
	Err      error
	Reported bool
}

func (e *ExitError) Error() string { return e.Err.Error() }
func (e *ExitError) Unwrap() error { return e.Err }

// Exit wraps err with code; nil stays nil.
func Exit(code int, err error) error {
	if err == nil {
		return nil
	}
	return &ExitError{Code: code, Err: err}
}

// Reported is Exit for an error the command has already printed.
func Reported(code int, err error) error {
	if err == nil {
		return nil
	}
	return &ExitError{Code: code, Err: err, Reported: true}
}

// Classify maps a client error to its exit code: unreachable servers exit 2,
// everything else 1.
func Classify(err error) error {
	if err == nil {
		return nil
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		return err
	}
	if client.IsUnreachable(err) {
		return Exit(ExitUnreachable, err)
	}
	return Exit(ExitFailure, err)
}

// Node is what client commands know about the local node's configuration.
type Node struct {
	DataDir     string
	AdminListen string
	Listen      map[string]string // enabled role → listen address
	RootKeyFile string            // cluster.root_key_file; "" = <DataDir>/keys/root.key
}

// RootKey reads the node's root key without creating it: RootKeyFile when
// set, else <DataDir>/keys/root.key (errors as auth.ReadKeyFile).
func (n Node) RootKey() (*auth.Keyring, error) {
	return auth.ReadNodeKey(n.DataDir, n.RootKeyFile)
}

// Env gives commands lazy access to the node settings (the root command
// loads the config once flags are parsed).
type Env struct {
	Node func() (Node, error)
}

// Flags are the flags every client command shares.
type Flags struct {
	Server string
	Token  string
	Output string
}

// Register adds --server, --token and -o to cmd.
func (f *Flags) Register(cmd *cobra.Command, role string) {
	cmd.Flags().StringVar(&f.Server, "server", "", "base URL of the "+role+" listener (default: the configured local listener)")
	cmd.Flags().StringVar(&f.Token, "token", "", "capability token (default $RON_TOKEN, else minted from the local root key)")
	cmd.Flags().StringVarP(&f.Output, "output", "o", "text", "output format: text or json")
}

// CheckOutput validates -o.
func (f *Flags) CheckOutput() error { return CheckOutput(f.Output) }

// CheckOutput validates an -o value of any command: text or json, else an
// ExitFailure naming it.
func CheckOutput(output string) error {
	if output != "text" && output != "json" {
		return Exit(ExitFailure, fmt.Errorf("-o must be text or json, not %q", output))
	}
	return nil
}

// ServerURL is --server or the configured local listener of role. A role
// the node's config does not enable has no local listener: that is an
// ExitFailure asking for --server.
func (f *Flags) ServerURL(env Env, role string) (string, error) {
	if f.Server != "" {
		return f.Server, nil
	}
	n, err := env.Node()
	if err != nil {
		return "", err
	}
	addr := n.Listen[role]
	if addr == "" {
		return "", Exit(ExitFailure, fmt.Errorf("the %s role is not enabled in this node's config: use --server URL", role))
	}
	return "http://" + addr, nil
}

// OnceToken returns a token source for scope that asks TokenSource once, on
// first use, and then answers the same. With optional (read scopes) a failure
// to get a token means no token: reads are public by default, and a node
// with private reads answers 401, which says what is missing.
func (f *Flags) OnceToken(env Env, getenv func(string) string, scope string, optional bool) func(context.Context) (string, error) {
	src := f.TokenSource(env, getenv, scope)
	var (
		once   sync.Once
		tok    string
		tokErr error
	)
	return func(ctx context.Context) (string, error) {
		once.Do(func() {
			tok, tokErr = src(ctx)
			if tokErr != nil && optional {
				tok, tokErr = "", nil
			}
		})
		return tok, tokErr
	}
}

// localTokenTTL is the lifetime of tokens client commands mint on the node.
const localTokenTTL = 10 * time.Minute

// TokenSource returns a function that yields a token for scope: --token or
// RON_TOKEN when given; else one minted from the local root key; else one
// asked from the admin plane (POST /api/v1/tokens, loopback).
func (f *Flags) TokenSource(env Env, getenv func(string) string, scope string) func(ctx context.Context) (string, error) {
	return func(ctx context.Context) (string, error) {
		if f.Token != "" {
			return f.Token, nil
		}
		if t := getenv("RON_TOKEN"); t != "" {
			return t, nil
		}
		n, err := env.Node()
		if err != nil {
			return "", err
		}
		if keys, err := n.RootKey(); err == nil {
			tok, _, err := keys.Mint(auth.MintOptions{Scopes: []string{scope}, TTL: localTokenTTL})
			return tok, err
		}
		return AdminToken(ctx, n.AdminListen, scope)
	}
}

// AdminToken asks the local admin plane for a short-lived token.
func AdminToken(ctx context.Context, adminListen, scope string) (string, error) {
	req, err := adminRequest(ctx, http.MethodPost, "http://"+adminListen+"/api/v1/tokens", "",
		map[string]any{"scopes": []string{scope}, "ttl": localTokenTTL.String()})
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", fmt.Errorf("no readable root key and the admin plane at %s is unreachable: %w", adminListen, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusOK {
		return "", httpx.DecodeError(resp.StatusCode, data)
	}
	var reply struct {
		Token string `json:"token"`
	}
	if err := json.Unmarshal(data, &reply); err != nil || reply.Token == "" {
		return "", fmt.Errorf("admin plane returned no token")
	}
	return reply.Token, nil
}

// PrintJSON writes v as indented JSON.
func PrintJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// Bytes renders a byte count for people: "512 B", "1.5 KiB", … up to PiB.
func Bytes(n int64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB"}
	v, i := float64(n), 0
	for v >= 1024 && i < len(units)-1 {
		v /= 1024
		i++
	}
	if i == 0 {
		return fmt.Sprintf("%d B", n)
	}
	return fmt.Sprintf("%.1f %s", v, units[i])
}
