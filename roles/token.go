package roles

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/ronhq/ron/httpx/auth"
	"github.com/ronhq/ron/roles/cli"
)

// maxTokenTTL caps tokens minted through the admin API and the CLI.
const maxTokenTTL = 365 * 24 * time.Hour

// mintToken mints a token with the given scopes, optional tenant and TTL
// ("" = 24h). It is shared by `ron token mint` and POST /api/v1/tokens.
func mintToken(keys *auth.Keyring, scopes []string, tenant, ttl string) (TokenReply, error) {
	d := 24 * time.Hour
	if ttl != "" {
		var err error
		if d, err = time.ParseDuration(ttl); err != nil || d <= 0 || d > maxTokenTTL {
			return TokenReply{}, fmt.Errorf("ttl %q must be a positive Go duration up to %s", ttl, maxTokenTTL)
		}
	}
	now := time.Now()
	tok, id, err := keys.Mint(auth.MintOptions{Scopes: scopes, Tenant: tenant, TTL: d, Now: now})
	if err != nil {
		return TokenReply{}, err
	}
	return TokenReply{Token: tok, ID: id, Expires: now.Add(d).UTC().Truncate(time.Second)}, nil
}

func (a *app) tokenCommand() *cobra.Command {
	c := &cobra.Command{Use: "token", Short: "Capability tokens"}
	var scopes []string
	var tenant, ttl, output string
	mint := &cobra.Command{
		Use:   "mint",
		Short: "Mint a token from the local root key (or ask the local admin plane)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := a.load()
			if err != nil {
				return cli.Exit(cli.ExitFailure, err)
			}
			keys, err := readRootKey(cfg)
			if err != nil {
				return cli.Exit(cli.ExitFailure, fmt.Errorf("root key: %w (run this on the node, as the ron user)", err))
			}
			reply, err := mintToken(keys, scopes, tenant, ttl)
			if err != nil {
				return cli.Exit(cli.ExitFailure, err)
			}
			if output == "json" {
				return cli.PrintJSON(cmd.OutOrStdout(), reply)
			}
			fmt.Fprintln(cmd.OutOrStdout(), reply.Token)
			return nil
		},
	}
	mint.Flags().StringSliceVar(&scopes, "scope", nil, "scopes (repeat or comma-separate): admin, storage:write, …")
	mint.Flags().StringVar(&tenant, "tenant", "", "tenant caveat")
	mint.Flags().StringVar(&ttl, "ttl", "24h", "lifetime")
	mint.Flags().StringVarP(&output, "output", "o", "text", "output format: text or json")
	_ = mint.MarkFlagRequired("scope")
	c.AddCommand(mint)
	return c
}
