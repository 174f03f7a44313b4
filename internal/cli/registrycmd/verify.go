package registrycmd

import (
	"fmt"
	"io"
	"net/http"

	"github.com/spf13/cobra"

	"github.com/ronhq/ron/httpx/client"
	"github.com/ronhq/ron/internal/cli"
	"github.com/ronhq/ron/roles/registry/verify"
)

func verifyCommand() *cobra.Command {
	var opt verify.Options
	var output string
	cmd := &cobra.Command{
		Use:   "verify URL [--log-key VKEY|FILE] [--genesis b3:…] [--state FILE]",
		Short: "Independently verify a registry's log over its public HTTP API",
		Long: "Verifies the checkpoint signature, every entry bundle from min_index, every per-version check " +
			"(canonical form, chain, payload_b3, quorum signatures, committed_at), every hash tile and the root, " +
			"using golang.org/x/mod/sumdb/tlog and note only. Progress and warnings go to stderr.",
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(output); err != nil {
				return report(cmd, err)
			}
			tr := client.NewTransport(client.TransportOptions{})
			defer tr.CloseIdleConnections()
			opt.URL, opt.HTTP, opt.Progress = args[0], &http.Client{Transport: tr}, cmd.ErrOrStderr()
			res, err := verify.Run(cmd.Context(), opt)
			if err != nil {
				return report(cmd, err)
			}
			if output == "json" {
				return report(cmd, cli.PrintJSON(cmd.OutOrStdout(), res))
			}
			return report(cmd, printVerified(cmd.OutOrStdout(), res))
		},
	}
	cmd.Flags().StringVar(&opt.LogKey, "log-key", "", "pin the log's note verifier key (the key or a file holding it)")
	cmd.Flags().StringVar(&opt.Genesis, "genesis", "", "pin version 0's payload_b3 (b3:…)")
	cmd.Flags().StringVar(&opt.StateFile, "state", "", "state file: check consistency with the last run and update it")
	cmd.Flags().StringVarP(&output, "output", "o", "text", "output format: text or json")
	return cmd
}

// printVerified prints a passed verification on one line.
func printVerified(w io.Writer, r verify.Result) error {
	pin := "pinned"
	if r.Unpinned {
		pin = "unpinned"
	}
	_, err := fmt.Fprintf(w, "ok  %s  size %d  root %s  verified %d from %d  head %d  (%s key)\n",
		r.Origin, r.Size, r.Root, r.Verified, r.MinIndex, r.Head, pin)
	return err
}
