package registrycmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/internal/cli"
	"github.com/ronhq/ron/roles/registry/registryapi"
	"github.com/ronhq/ron/roles/registry/registryapi/descriptor"
	"github.com/ronhq/ron/roles/registry/regstore"
)

// maxProposalFile bounds a propose input file (the server's body limit).
const maxProposalFile = 1 << 20

func initCommand(env cli.Env) *cobra.Command {
	var trustRoots, origin, output string
	cmd := &cobra.Command{
		Use:   "init --trust-roots FILE [--origin O]",
		Short: "Write genesis and the first checkpoint into <data>/registry (the node must be stopped)",
		Args:  exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput(output); err != nil {
				return report(cmd, err)
			}
			if trustRoots == "" {
				return report(cmd, usage(errors.New("--trust-roots FILE is required")))
			}
			if _, err := os.Stat(trustRoots); err != nil {
				return report(cmd, usage(fmt.Errorf("--trust-roots: %w", err)))
			}
			n, err := env.Node()
			if err != nil {
				return report(cmd, err)
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), cliTimeout)
			defer cancel()
			res, err := regstore.Init(ctx, n.DataDir, trustRoots, origin, time.Now())
			if err != nil {
				return report(cmd, err)
			}
			if output == "json" {
				return report(cmd, cli.PrintJSON(cmd.OutOrStdout(), res))
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "genesis payload_b3: %s\nverifier key: %s\n", res.PayloadB3, res.VerifierKey)
			return report(cmd, err)
		},
	}
	cmd.Flags().StringVar(&trustRoots, "trust-roots", "", "trust-roots file: {schema_version, signers, quorum}")
	cmd.Flags().StringVar(&origin, "origin", "", "checkpoint origin (default ron-registry/<log-id>)")
	cmd.Flags().StringVarP(&output, "output", "o", "text", "output format: text or json")
	return cmd
}

func proposeCommand(env cli.Env, getenv func(string) string) *cobra.Command {
	var f cli.Flags
	cmd := &cobra.Command{
		Use:   "propose FILE.json",
		Short: "Propose a DescriptorSet (missing version, prev_hash, created_at are filled from HEAD and now)",
		Args:  exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(f.Output); err != nil {
				return report(cmd, err)
			}
			raw, err := readInput(args[0])
			if err != nil {
				return report(cmd, err)
			}
			in, err := parseProposeInput(raw)
			if err != nil {
				return report(cmd, err)
			}
			return runClient(cmd, env, getenv, &f, registryapi.ScopePropose, func(ctx context.Context, c registryapi.Client) (registryapi.Proposed, error) {
				req, err := in.request(ctx, c, time.Now())
				if err != nil {
					return registryapi.Proposed{}, err
				}
				return c.Propose(ctx, req)
			}, printJSON[registryapi.Proposed])
		},
	}
	f.Register(cmd, registryapi.RoleName)
	return cmd
}

// readInput reads a propose input file of at most maxProposalFile bytes.
func readInput(path string) ([]byte, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, usage(err)
	}
	defer fh.Close()
	raw, err := io.ReadAll(io.LimitReader(fh, maxProposalFile+1))
	if err != nil {
		return nil, usage(err)
	}
	if len(raw) > maxProposalFile {
		return nil, usage(fmt.Errorf("%s is larger than %d bytes", path, maxProposalFile))
	}
	return raw, nil
}

func approveCommand(env cli.Env, getenv func(string) string) *cobra.Command {
	var f cli.Flags
	var keyFile string
	cmd := &cobra.Command{
		Use:   "approve ID [--key FILE]",
		Short: "Check a proposal's payload_b3 locally, sign it and post the approval",
		Args:  exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(f.Output); err != nil {
				return report(cmd, err)
			}
			id := args[0]
			if err := descriptor.ParseProposalID(id); err != nil {
				return report(cmd, usage(fmt.Errorf("%q is not a proposal id (p_ and 32 hex digits)", id)))
			}
			signerID, key, err := approveKey(env, keyFile)
			if err != nil {
				return report(cmd, err)
			}
			return runClient(cmd, env, getenv, &f, registryapi.ScopeApprove, func(ctx context.Context, c registryapi.Client) (registryapi.ApprovalResult, error) {
				p, err := c.Proposal(ctx, id)
				if err != nil {
					return registryapi.ApprovalResult{}, err
				}
				b3, err := checkProposal(id, p)
				if err != nil {
					return registryapi.ApprovalResult{}, err
				}
				return c.Approve(ctx, id, descriptor.Sign(key, signerID, b3, time.Now()))
			}, printJSON[registryapi.ApprovalResult])
		},
	}
	f.Register(cmd, registryapi.RoleName)
	cmd.Flags().StringVar(&keyFile, "key", "", "signer key file (default on the node: the dev signer key)")
	return cmd
}

// approveKey reads --key, or on the node the dev signer key.
func approveKey(env cli.Env, keyFile string) (string, []byte, error) {
	if keyFile == "" {
		n, err := env.Node()
		if err != nil {
			return "", nil, err
		}
		keyFile = regstore.DevSignerPath(n.DataDir)
	}
	id, key, err := readSignerKey(keyFile)
	return id, key, err
}

// checkProposal recomputes the proposal's payload_b3 from its payload and
// requires it to equal the served payload_b3 and to give the proposal id,
// so the approver signs exactly the payload it was shown.
func checkProposal(id string, p registryapi.Proposal) (string, error) {
	canonical, err := descriptor.Canonicalize(p.Payload)
	if err != nil {
		return "", failed(httpx.CodeHashMismatch, fmt.Errorf("proposal %s: payload is not JSON: %w", id, err))
	}
	b3 := descriptor.PayloadB3(canonical)
	if b3 != p.PayloadB3 || descriptor.ProposalID(b3) != id {
		return "", failed(httpx.CodeHashMismatch, fmt.Errorf("proposal %s: payload hashes to %s, the server says %s: refusing to sign",
			id, b3, p.PayloadB3))
	}
	return b3, nil
}

func commitCommand(env cli.Env, getenv func(string) string) *cobra.Command {
	var f cli.Flags
	cmd := &cobra.Command{
		Use:   "commit ID",
		Short: "Commit a proposal that has its quorum",
		Args:  exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(f.Output); err != nil {
				return report(cmd, err)
			}
			id := args[0]
			if err := descriptor.ParseProposalID(id); err != nil {
				return report(cmd, usage(fmt.Errorf("%q is not a proposal id (p_ and 32 hex digits)", id)))
			}
			return runClient(cmd, env, getenv, &f, registryapi.ScopeCommit, func(ctx context.Context, c registryapi.Client) (registryapi.Committed, error) {
				return c.Commit(ctx, id)
			}, printJSON[registryapi.Committed])
		},
	}
	f.Register(cmd, registryapi.RoleName)
	return cmd
}

func headCommand(env cli.Env, getenv func(string) string) *cobra.Command {
	var f cli.Flags
	cmd := &cobra.Command{
		Use:   "head",
		Short: "Print the committed HEAD: {version, payload_b3, committed_at}",
		Args:  exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput(f.Output); err != nil {
				return report(cmd, err)
			}
			return runClient(cmd, env, getenv, &f, registryapi.ScopeRead, func(ctx context.Context, c registryapi.Client) (registryapi.Head, error) {
				return c.Head(ctx)
			}, printJSON[registryapi.Head])
		},
	}
	f.Register(cmd, registryapi.RoleName)
	return cmd
}

func getCommand(env cli.Env, getenv func(string) string) *cobra.Command {
	var f cli.Flags
	cmd := &cobra.Command{
		Use:   "get VERSION",
		Short: "Print one version's SignedArtifact (text: its canonical bytes)",
		Args:  exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(f.Output); err != nil {
				return report(cmd, err)
			}
			v, ok := parseVersion(args[0])
			if !ok {
				return report(cmd, usage(fmt.Errorf("version %q is not a canonical decimal", args[0])))
			}
			return runClient(cmd, env, getenv, &f, registryapi.ScopeRead, func(ctx context.Context, c registryapi.Client) (json.RawMessage, error) {
				_, body, err := c.Get(ctx, v)
				return body, err
			}, printArtifact)
		},
	}
	f.Register(cmd, registryapi.RoleName)
	return cmd
}

// printArtifact prints an artifact's canonical bytes (text) or indented.
func printArtifact(w io.Writer, body json.RawMessage, indent bool) error {
	if indent {
		return cli.PrintJSON(w, body)
	}
	_, err := fmt.Fprintf(w, "%s\n", body)
	return err
}
