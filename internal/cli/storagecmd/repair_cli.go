package storagecmd

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/spf13/cobra"

	"github.com/ronhq/ron/internal/cli"
	"github.com/ronhq/ron/roles/storage/storageapi"
	"github.com/ronhq/ron/runtime/config"
)

// repairCallTimeout bounds one `ron repair …` call.
const repairCallTimeout = 10 * time.Second

// repairFlags are the flags of the `ron repair` commands.
type repairFlags struct {
	admin, token, output string
}

// RepairCommands returns `ron repair status|run|pace RATE --for DUR`
// (docs/cluster.md §9): they talk to the admin listener (--admin HOST:PORT,
// default the configured admin.listen) with --token, else $RON_TOKEN, else an
// admin token minted from the local root key, else none (loopback).
func RepairCommands(env cli.Env, getenv func(string) string) []*cobra.Command {
	var f repairFlags
	c := &cobra.Command{Use: "repair", Short: "Repair progress and control in cluster mode (asks the admin listener)"}
	c.PersistentFlags().StringVar(&f.admin, "admin", "", "admin listener HOST:PORT (default: the configured admin.listen)")
	c.PersistentFlags().StringVar(&f.token, "token", "", "admin token for a non-loopback admin listener (default $RON_TOKEN, else minted from the local root key)")
	c.PersistentFlags().StringVarP(&f.output, "output", "o", "text", "output format: text or json")
	c.AddCommand(repairStatusCommand(env, getenv, &f), repairRunCommand(env, getenv, &f), repairPaceCommand(env, getenv, &f))
	return []*cobra.Command{c}
}

func repairStatusCommand(env cli.Env, getenv func(string) string, f *repairFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "status",
		Short: "Show the repair progress of the node's storage role",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var st struct {
				Roles []struct {
					Name    string `json:"name"`
					Details struct {
						Repair *storageapi.RepairProgress `json:"repair"`
					} `json:"details"`
				} `json:"roles"`
			}
			if _, err := f.call(cmd.Context(), env, getenv, http.MethodGet, "/api/v1/status", nil, &st); err != nil {
				return err
			}
			for _, r := range st.Roles {
				if r.Name == storageapi.RoleName && r.Details.Repair != nil {
					return f.print(cmd.OutOrStdout(), r.Details.Repair, func(w io.Writer) { printRepair(w, r.Details.Repair) })
				}
			}
			return cli.Exit(cli.ExitFailure, fmt.Errorf("no repair on this node: the storage role does not run in cluster mode"))
		},
	}
}

func repairRunCommand(env cli.Env, getenv func(string) string, f *repairFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "run",
		Short: "Start a repair pass now (after the current one)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var reply map[string]string
			raw, err := f.call(cmd.Context(), env, getenv, http.MethodPost, "/api/v1/repair/run", struct{}{}, &reply)
			if err != nil {
				return err
			}
			return f.printRaw(cmd.OutOrStdout(), raw, "repair pass requested")
		},
	}
}

func repairPaceCommand(env cli.Env, getenv func(string) string, f *repairFlags) *cobra.Command {
	var dur time.Duration
	cmd := &cobra.Command{
		Use:   "pace RATE",
		Short: "Set the repair pace (bytes/s: 200MiB, 0 pauses) for --for, then return to repair_pace",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			body, err := paceBody(args[0], dur)
			if err != nil {
				return cli.Exit(cli.ExitFailure, err)
			}
			var reply storageapi.RepairPaceReply
			raw, err := f.call(cmd.Context(), env, getenv, http.MethodPost, "/api/v1/repair/pace", body, &reply)
			if err != nil {
				return err
			}
			return f.printRaw(cmd.OutOrStdout(), raw, fmt.Sprintf("repair pace %s/s until %s",
				cli.Bytes(reply.PaceBytesPerS), reply.BoostUntil.UTC().Format(time.RFC3339)))
		},
	}
	cmd.Flags().DurationVar(&dur, "for", time.Hour, "how long the pace holds (1s–24h)")
	return cmd
}

// paceBody builds the pace request from RATE (a size: bytes or KiB/MiB/GiB)
// and DUR (whole seconds, 1 s–24 h).
func paceBody(rate string, d time.Duration) (storageapi.RepairPaceRequest, error) {
	n, err := config.ParseSize(rate)
	if err != nil {
		return storageapi.RepairPaceRequest{}, err
	}
	if d < time.Second || d > storageapi.MaxRepairBoost || d%time.Second != 0 {
		return storageapi.RepairPaceRequest{}, fmt.Errorf("--for must be whole seconds from 1s to 24h, not %s", d)
	}
	bps, secs := int64(n), int64(d/time.Second)
	return storageapi.RepairPaceRequest{BytesPerS: &bps, DurationS: &secs}, nil
}

// call sends one request to the admin listener and decodes a 2xx answer
// into out (cli.AdminCall: unreachable exits 2, an error answer exits 1).
func (f *repairFlags) call(ctx context.Context, env cli.Env, getenv func(string) string, method, path string, in, out any) ([]byte, error) {
	if err := cli.CheckOutput(f.output); err != nil {
		return nil, err
	}
	admin, token, err := cli.AdminTarget(env, getenv, f.admin, f.token)
	if err != nil {
		return nil, err
	}
	if ctx == nil {
		ctx = context.Background()
	}
	return cli.AdminCall(ctx, repairCallTimeout, admin, token, method, path, in, out)
}

// print writes v as JSON or its text rendering.
func (f *repairFlags) print(w io.Writer, v any, text func(io.Writer)) error {
	if f.output == "json" {
		return cli.PrintJSON(w, v)
	}
	text(w)
	return nil
}

// printRaw writes the answer (json) or one line of text.
func (f *repairFlags) printRaw(w io.Writer, raw []byte, line string) error {
	if f.output == "json" {
		_, err := w.Write(raw)
		return err
	}
	_, err := fmt.Fprintln(w, line)
	return err
}

// printRepair renders `ron repair status`.
func printRepair(w io.Writer, p *storageapi.RepairProgress) {
	eta, boost := "-", "-"
	if p.EtaS != nil {
		eta = (time.Duration(*p.EtaS) * time.Second).String()
	}
	if p.BoostUntil != nil {
		boost = p.BoostUntil.UTC().Format(time.RFC3339)
	}
	fmt.Fprintf(w, "state %s  pass %d  scanned %d/%d  under-replicated %d\n", p.State, p.Pass, p.Scanned, p.Total, p.UnderReplicated)
	fmt.Fprintf(w, "queued %d  skipped %d  pending %s  done %s  eta %s\n", p.Queued, p.Skipped,
		cli.Bytes(p.BytesPending), cli.Bytes(p.BytesDone), eta)
	fmt.Fprintf(w, "rate %s/s  pace %s/s  boost until %s\n", cli.Bytes(int64(p.RateBytesPerS)), cli.Bytes(p.PaceBytesPerS), boost)
	if p.Errors > 0 {
		fmt.Fprintf(w, "errors %d  last: %s\n", p.Errors, p.LastError)
	}
}
