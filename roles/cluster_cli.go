package roles

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/httpx/auth"
	"github.com/ronhq/ron/roles/cli"
	"github.com/ronhq/ron/runtime/cluster"
)

// clusterCallTimeout bounds one `ron cluster …` call (placement asks every
// known storage member, up to placementTimeout).
const clusterCallTimeout = placementTimeout + 2*time.Second

// adminTokenTTL is the lifetime of the admin token the cluster commands
// mint from the local root key.
const adminTokenTTL = time.Minute

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
			var p PlacementReply
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
// out. Unreachable exits 2; an error answer (cluster mode off: 404) exits 1
// with the envelope's message.
func (a *app) clusterGet(ctx context.Context, f *clusterFlags, path string, out any) ([]byte, error) {
	if f.output != "text" && f.output != "json" {
		return nil, cli.Exit(cli.ExitFailure, fmt.Errorf("-o must be text or json"))
	}
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, cancel := context.WithTimeout(ctx, clusterCallTimeout)
	defer cancel()
	admin, token, err := a.adminTarget(f)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+admin+path, nil)
	if err != nil {
		return nil, cli.Exit(cli.ExitFailure, err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, cli.Exit(cli.ExitUnreachable, fmt.Errorf("admin plane at %s unreachable: %w", admin, err))
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return nil, cli.Exit(cli.ExitUnreachable, fmt.Errorf("admin plane at %s: %w", admin, err))
	}
	if resp.StatusCode != http.StatusOK {
		return nil, cli.Exit(cli.ExitFailure, httpx.DecodeError(resp.StatusCode, raw))
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return nil, cli.Exit(cli.ExitFailure, fmt.Errorf("admin plane at %s sent an invalid answer: %w", admin, err))
	}
	return raw, nil
}

// adminTarget is the admin listener to ask and the token to send: --token,
// else $RON_TOKEN, else an admin token minted from the local root key when
// it is readable, else none (loopback callers need none).
func (a *app) adminTarget(f *clusterFlags) (admin, token string, err error) {
	admin, token = f.admin, f.token
	if token == "" {
		token = a.getenv("RON_TOKEN")
	}
	if admin != "" && token != "" {
		return admin, token, nil
	}
	cfg, err := a.load()
	if err != nil {
		return "", "", cli.Exit(cli.ExitFailure, err)
	}
	if admin == "" {
		admin = cfg.Admin.Listen
	}
	if token == "" {
		if keys, err := readRootKey(cfg); err == nil {
			token, _, _ = keys.Mint(auth.MintOptions{Scopes: []string{"admin"}, TTL: adminTokenTTL})
		}
	}
	return admin, token, nil
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
func printPlacement(w io.Writer, id string, p PlacementReply) {
	list := func(ids []string) string {
		if len(ids) == 0 {
			return "(none)"
		}
		return strings.Join(ids, ", ")
	}
	fmt.Fprintf(w, "object   %s\ntargets  %s\nholders  %s\n", id, list(p.Targets), list(p.Holders))
}
