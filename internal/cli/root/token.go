package root

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/ronhq/ron/internal/cli"
	"github.com/ronhq/ron/internal/node"
)

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
			keys, err := node.ReadRootKey(cfg)
			if err != nil {
				return cli.Exit(cli.ExitFailure, fmt.Errorf("root key: %w (run this on the node, as the ron user)", err))
			}
			reply, err := node.MintToken(keys, scopes, tenant, ttl)
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
