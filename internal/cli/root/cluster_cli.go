package root

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/ronhq/ron/internal/cli"
	"github.com/ronhq/ron/internal/node"
	"github.com/ronhq/ron/runtime/cluster"
)

// clusterCallTimeout bounds one `ron cluster …` call (placement asks every
// known storage member, up to node.PlacementTimeout).
const clusterCallTimeout = node.PlacementTimeout + 2*time.Second

// clusterFlags are the flags of the `ron cluster` commands.
type clusterFlags struct {
	admin, token, output string
}

func (a *app) clusterCommand() *cobra.Command {
	c := &cobra.Command{Use: "cluster", Short: "Cluster membership and object placement (asks the admin listener)"}
	var f clusterFlags
	c.PersistentFlags().StringVar(&f.admin, "admin", "", "admin listener HOST:PORT (default: the configured admin.listen)")
	c.PersistentFlags().StringVar(&f.token, "token", "", "admin token for a non-loopback admin listener (default $RON_TOKEN, else minted from the local root key)")
	c.PersistentFlags().StringVarP(&f.output, "output", "o", "text", "output format: text or json")
	members := &cobra.Command{
		Use:   "members",
		Short: "List the cluster members: id, state, roles, zone, since",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var st cluster.Status
			raw, err := a.clusterGet(cmd.Context(), &f, "/api/v1/cluster/members", &st)
			if err != nil {
				return err
			}
			return f.print(cmd.OutOrStdout(), raw, func(w io.Writer) { printMembers(w, &st) })
		},
	}
	placement := &cobra.Command{
		Use:   "placement b3:<hex>",
		Short: "Show an object's placement targets and the members holding it",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var p node.PlacementReply
			raw, err := a.clusterGet(cmd.Context(), &f, "/api/v1/cluster/placement/"+args[0], &p)
			if err != nil {
				return err
			}
			return f.print(cmd.OutOrStdout(), raw, func(w io.Writer) { printPlacement(w, args[0], p) })
		},
	}
	c.AddCommand(members, placement)
	return c
}

// print writes raw (json) or the text rendering.
func (f *clusterFlags) print(w io.Writer, raw []byte, text func(io.Writer)) error {
	if f.output == "json" {
		_, err := w.Write(raw)
		return err
	}
	text(w)
	return nil
}

// clusterGet GETs path from the admin listener and decodes the answer into
// out (cli.AdminCall: unreachable exits 2; an error answer, e.g. cluster
// mode off: 404, exits 1 with the envelope's message).
func (a *app) clusterGet(ctx context.Context, f *clusterFlags, path string, out any) ([]byte, error) {
	if err := cli.CheckOutput(f.output); err != nil {
		return nil, err
	}
	if ctx == nil {
		ctx = context.Background()
	}
	admin, token, err := cli.AdminTarget(cli.Env{Node: a.node}, a.getenv, f.admin, f.token)
	if err != nil {
		return nil, err
	}
	return cli.AdminCall(ctx, clusterCallTimeout, admin, token, http.MethodGet, path, nil, out)
}

// printMembers renders the membership as `ron cluster members` and `ron
// status` show it.
func printMembers(w io.Writer, st *cluster.Status) {
	zone := st.Zone
	if zone == "" {
		zone = "-"
	}
	fmt.Fprintf(w, "node %s  zone %s  members %d\n", st.NodeID, zone, len(st.Members))
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "MEMBER\tSTATE\tROLES\tZONE\tSINCE")
	for _, m := range st.Members {
		mz := m.Zone
		if mz == "" {
			mz = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", m.ID, m.State, strings.Join(m.Roles, ","), mz, formatSince(m.Since))
	}
	_ = tw.Flush()
}

// formatSince is an RFC 3339 time ("-" when unknown).
func formatSince(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

// printPlacement renders `ron cluster placement`.
func printPlacement(w io.Writer, id string, p node.PlacementReply) {
	list := func(ids []string) string {
		if len(ids) == 0 {
			return "(none)"
		}
		return strings.Join(ids, ", ")
	}
	fmt.Fprintf(w, "object   %s\ntargets  %s\nholders  %s\n", id, list(p.Targets), list(p.Holders))
}
