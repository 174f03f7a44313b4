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
	return clientCommand(env, getenv, "propose FILE.json",
		"Propose a DescriptorSet (missing version, prev_hash, created_at are filled from HEAD and now)",
		1, registryapi.ScopePropose, func(args []string) (call[registryapi.Proposed], error) {
			raw, err := readInput(args[0])
			if err != nil {
				return nil, err
			}
			in, err := parseProposeInput(raw)
			if err != nil {
				return nil, err
			}
			return func(ctx context.Context, c registryapi.Client) (registryapi.Proposed, error) {
				req, err := in.request(ctx, c, time.Now())
				if err != nil {
					return registryapi.Proposed{}, err
				}
				return c.Propose(ctx, req)
			}, nil
		}, printJSON[registryapi.Proposed])
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
	var keyFile string
	cmd := clientCommand(env, getenv, "approve ID [--key FILE]",
		"Check a proposal's payload_b3 locally, sign it and post the approval",
		1, registryapi.ScopeApprove, func(args []string) (call[registryapi.ApprovalResult], error) {
			id, err := proposalID(args[0])
			if err != nil {
				return nil, err
			}
			signerID, key, err := approveKey(env, keyFile)
			if err != nil {
				return nil, err
			}
			return func(ctx context.Context, c registryapi.Client) (registryapi.ApprovalResult, error) {
				p, err := c.Proposal(ctx, id)
				if err != nil {
					return registryapi.ApprovalResult{}, err
				}
				b3, err := checkProposal(id, p)
				if err != nil {
					return registryapi.ApprovalResult{}, err
				}
				return c.Approve(ctx, id, descriptor.Sign(key, signerID, b3, time.Now()))
			}, nil
		}, printJSON[registryapi.ApprovalResult])
	cmd.Flags().StringVar(&keyFile, "key", "", "signer key file (default on the node: the dev signer key)")
	return cmd
}

// proposalID checks a proposal id argument (a usage error when bad).
func proposalID(id string) (string, error) {
	if err := descriptor.ParseProposalID(id); err != nil {
		return "", usage(fmt.Errorf("%q is not a proposal id (p_ and 32 hex digits)", id))
	}
	return id, nil
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
	return clientCommand(env, getenv, "commit ID", "Commit a proposal that has its quorum",
		1, registryapi.ScopeCommit, func(args []string) (call[registryapi.Committed], error) {
			id, err := proposalID(args[0])
			if err != nil {
				return nil, err
			}
			return func(ctx context.Context, c registryapi.Client) (registryapi.Committed, error) {
				return c.Commit(ctx, id)
			}, nil
		}, printJSON[registryapi.Committed])
}

func headCommand(env cli.Env, getenv func(string) string) *cobra.Command {
	return clientCommand(env, getenv, "head", "Print the committed HEAD: {version, payload_b3, committed_at}",
		0, registryapi.ScopeRead, func([]string) (call[registryapi.Head], error) {
			return func(ctx context.Context, c registryapi.Client) (registryapi.Head, error) { return c.Head(ctx) }, nil
		}, printJSON[registryapi.Head])
}

func getCommand(env cli.Env, getenv func(string) string) *cobra.Command {
	return clientCommand(env, getenv, "get VERSION", "Print one version's SignedArtifact (text: its canonical bytes)",
		1, registryapi.ScopeRead, func(args []string) (call[json.RawMessage], error) {
			v, ok := parseVersion(args[0])
			if !ok {
				return nil, usage(fmt.Errorf("version %q is not a canonical decimal", args[0]))
			}
			return func(ctx context.Context, c registryapi.Client) (json.RawMessage, error) {
				_, body, err := c.Get(ctx, v)
				return body, err
			}, nil
		}, printArtifact)
}

// printArtifact prints an artifact's canonical bytes (text) or indented.
func printArtifact(w io.Writer, body json.RawMessage, indent bool) error {
	if indent {
		return cli.PrintJSON(w, body)
	}
	_, err := fmt.Fprintf(w, "%s\n", body)
	return err
}
