package root

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

	"github.com/ronhq/ron/internal/cli"
	"github.com/ronhq/ron/internal/node"
)

// statusTimeout bounds `ron status`.
const statusTimeout = 5 * time.Second

// defaultWatchInterval is the redraw period of `ron status -w`.
const defaultWatchInterval = 2 * time.Second

func (a *app) statusCommand() *cobra.Command {
	var admin, output string
	var watch bool
	var interval time.Duration
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Probe the node: exit 0 ready, 1 not ready or degraded, 2 unreachable (-w: redraw until Ctrl-C)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := cli.CheckOutput(output); err != nil {
				return err
			}
			if interval <= 0 {
				return cli.Exit(cli.ExitFailure, fmt.Errorf("--interval must be positive"))
			}
			if admin == "" {
				n, err := a.node()
				if err != nil {
					return err
				}
				admin = n.AdminListen
			}
			if watch {
				return runWatch(cmd, admin, output, interval)
			}
			return probeStatus(cmd.Context(), cmd.OutOrStdout(), admin, output)
		},
	}
	cmd.Flags().StringVar(&admin, "admin", "", "admin listener HOST:PORT (default: the configured admin.listen)")
	cmd.Flags().StringVarP(&output, "output", "o", "text", "output format: text or json (with -w: one JSON document per line)")
	cmd.Flags().BoolVarP(&watch, "watch", "w", false, "redraw every --interval until Ctrl-C; exit with the last probe's code")
	cmd.Flags().DurationVar(&interval, "interval", defaultWatchInterval, "redraw period of --watch")
	return cmd
}

// probeStatus prints the status once and maps it to the exit code.
func probeStatus(ctx context.Context, w io.Writer, admin, output string) error {
	st, raw, err := fetchStatus(ctx, admin)
	if err != nil {
		return cli.Exit(cli.ExitUnreachable, err)
	}
	if output == "json" {
		_, _ = w.Write(raw)
	} else {
		printStatus(w, st)
	}
	return statusExit(st)
}

// statusExit is nil when st is ready, else ExitFailure.
func statusExit(st *node.Status) error {
	if !st.Ready {
		return cli.Exit(cli.ExitFailure, fmt.Errorf("node is not ready"))
	}
	return nil
}

// fetchStatus reads /api/v1/status; any failure to get a status document
// counts as unreachable.
func fetchStatus(ctx context.Context, admin string) (*node.Status, []byte, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, cancel := context.WithTimeout(ctx, statusTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+admin+"/api/v1/status", nil)
	if err != nil {
		return nil, nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, nil, fmt.Errorf("admin plane at %s unreachable: %w", admin, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil || resp.StatusCode != http.StatusOK {
		return nil, nil, fmt.Errorf("admin plane at %s answered %d", admin, resp.StatusCode)
	}
	var st node.Status
	if err := json.Unmarshal(raw, &st); err != nil {
		return nil, nil, fmt.Errorf("admin plane at %s sent an invalid status: %w", admin, err)
	}
	return &st, raw, nil
}

func printStatus(w io.Writer, st *node.Status) {
	fmt.Fprintf(w, "ron %s  up %s  amnesia=%t  ready=%t\n\n", st.Version,
		(time.Duration(st.UptimeS) * time.Second).String(), st.Amnesia, st.Ready)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ROLE\tSTATE\tREADY\tDEGRADED\tRESTARTS\tLISTEN\tLAST ERROR")
	for _, r := range st.Roles {
		fmt.Fprintf(tw, "%s\t%s\t%t\t%t\t%d\t%s\t%s\n", r.Name, r.State, r.Ready, r.Degraded, r.Restarts, r.Listen, r.LastError)
	}
	_ = tw.Flush()
	if len(st.Queues) > 0 {
		fmt.Fprintln(w)
		tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "QUEUE\tDEPTH\tCAPACITY\tDROPPED")
		for _, q := range st.Queues {
			fmt.Fprintf(tw, "%s/%s\t%g\t%g\t%g\n", q.Role, q.Queue, q.Depth, q.Capacity, q.Dropped)
		}
		_ = tw.Flush()
	}
	if st.Cluster != nil {
		fmt.Fprintln(w)
		printMembers(w, st.Cluster)
	}
	for _, r := range st.Roles {
		if r.Details != nil {
			d, _ := json.Marshal(r.Details)
			fmt.Fprintf(w, "\n%s: %s\n", r.Name, strings.TrimSpace(string(d)))
		}
	}
}
