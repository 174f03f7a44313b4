package root

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/ronhq/ron/internal/cli"
	"github.com/ronhq/ron/internal/node"
	"github.com/ronhq/ron/runtime/cluster"
	"github.com/ronhq/ron/runtime/controlplane"
)

// clusterCallTimeout bounds one `ron cluster …` call (placement asks every
// known storage member, up to node.PlacementTimeout).
const clusterCallTimeout = node.PlacementTimeout + 2*time.Second

// clusterFlags are the flags of the `ron cluster` commands.
type clusterFlags struct {
	admin, token, output string
}

func (a *app) clusterCommand() *cobra.Command {
	c := &cobra.Command{Use: "cluster", Short: "Cluster membership, object placement and the control-plane servers (asks the admin listener)"}
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
	c.AddCommand(members, placement, a.serversCommand(&f))
	return c
}

// serversCommand is `ron cluster servers [add ID ADDR [--non-voter] | remove
// ID]` (docs/cluster.md §14): the control plane's configuration, and
// changes to it on the leader.
func (a *app) serversCommand(f *clusterFlags) *cobra.Command {
	show := func(cmd *cobra.Command, method, path string, in any) error {
		var st controlplane.Status
		raw, err := a.clusterCall(cmd.Context(), f, method, path, in, &st)
		if err != nil {
			return err
		}
		return f.print(cmd.OutOrStdout(), raw, func(w io.Writer) { printServers(w, &st) })
	}
	servers := &cobra.Command{
		Use:   "servers",
		Short: "List the control-plane servers: id, Raft address, vote, leader, gossip state",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return show(cmd, http.MethodGet, "/api/v1/cluster/servers", nil)
		},
	}
	var nonVoter bool
	add := &cobra.Command{
		Use:   "add ID RAFT-ADDR",
		Short: "Add (or update) a server by hand; run against the leader's admin listener",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			body := map[string]any{"id": args[0], "addr": args[1], "voter": !nonVoter}
			return show(cmd, http.MethodPost, "/api/v1/cluster/servers", body)
		},
	}
	add.Flags().BoolVar(&nonVoter, "non-voter", false, "add it as a non-voter (replicates the log, does not vote)")
	remove := &cobra.Command{
		Use:   "remove ID",
		Short: "Remove a server from the configuration; run against the leader's admin listener",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return show(cmd, http.MethodDelete, "/api/v1/cluster/servers/"+url.PathEscape(args[0]), nil)
		},
	}
	servers.AddCommand(add, remove)
	return servers
}

// printServers renders `ron cluster servers`.
func printServers(w io.Writer, st *controlplane.Status) {
	leader := st.Leader
	if leader == "" {
		leader = "(none)"
	}
	fmt.Fprintf(w, "node %s  state %s  leader %s  applied %d\n", st.ID, st.State, leader, st.AppliedIndex)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SERVER\tADDRESS\tVOTER\tLEADER\tGOSSIP")
	for _, s := range st.Servers {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", s.ID, s.Addr, yesNo(s.Voter), yesNo(s.Leader), s.Gossip)
	}
	_ = tw.Flush()
}

// yesNo renders a flag as a table cell.
func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
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
	return a.clusterCall(ctx, f, http.MethodGet, path, nil, out)
}

// clusterCall is clusterGet with any method and a JSON body in (nil: none).
func (a *app) clusterCall(ctx context.Context, f *clusterFlags, method, path string, in, out any) ([]byte, error) {
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
	return cli.AdminCall(ctx, clusterCallTimeout, admin, token, method, path, in, out)
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
