package root

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ronhq/ron/internal/cli"
	"github.com/ronhq/ron/internal/cli/indexcmd"
	"github.com/ronhq/ron/internal/cli/packcmd"
	"github.com/ronhq/ron/internal/cli/registrycmd"
	"github.com/ronhq/ron/internal/cli/storagecmd"
	"github.com/ronhq/ron/internal/node"
	"github.com/ronhq/ron/runtime/config"
)

// app carries the parsed root flags to every command.
type app struct {
	configFile string
	flags      *pflag.FlagSet // the command's flags, for keys set on the command line
	getenv     func(string) string
	environ    func() []string
	exit       func(code int) // the process exit, for a second signal during drain
}

// NewCommand builds the `ron` command tree. main maps its errors to exit
// codes (cli.ExitError) and passes os.Exit for the second-signal exit.
func NewCommand(exit func(code int)) *cobra.Command {
	return (&app{getenv: os.Getenv, environ: os.Environ, exit: exit}).rootCommand()
}

// rootCommand builds the command tree over a's environment (tests pass an
// empty one).
func (a *app) rootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:           "ron",
		Short:         "ron: content-addressed storage, index, registry, gateway and edge in one daemon",
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       node.Version,
	}
	root.PersistentFlags().StringVar(&a.configFile, "config", "", "TOML config file (default $RON_CONFIG)")
	root.PersistentFlags().String("data-dir", "", "data directory (default ./ron-data)")
	config.MarkKey(root.PersistentFlags(), "data-dir")
	root.PersistentPreRun = func(cmd *cobra.Command, _ []string) { a.flags = cmd.Flags() }
	env := cli.Env{Node: a.node}
	root.AddCommand(a.serveCommand(), a.statusCommand(), a.rolesCommand(), a.configCommand(),
		a.versionCommand(), a.tokenCommand(), a.doctorCommand(), a.clusterCommand(), packcmd.Command())
	for _, cmds := range [][]*cobra.Command{storagecmd.Commands(env, a.getenv), storagecmd.RepairCommands(env, a.getenv),
		indexcmd.Commands(env, a.getenv), registrycmd.Commands(env, a.getenv)} {
		root.AddCommand(cmds...)
	}
	return root
}

// load reads the config from defaults, file, environment and set flags.
func (a *app) load() (*node.Config, error) {
	file := a.configFile
	if file == "" {
		file = a.getenv("RON_CONFIG")
	}
	return node.LoadConfig(config.Sources{File: file, Environ: a.environ(), Flags: a.flags})
}

// node is the client commands' view of the local config.
func (a *app) node() (cli.Node, error) {
	cfg, err := a.load()
	if err != nil {
		return cli.Node{}, cli.Exit(cli.ExitFailure, err)
	}
	listen := map[string]string{}
	for _, l := range cfg.Listeners() {
		listen[l.Role] = l.Addr
	}
	return cli.Node{DataDir: cfg.DataDir, AdminListen: cfg.Admin.Listen, Listen: listen, RootKeyFile: cfg.Cluster.RootKeyFile}, nil
}

func (a *app) rolesCommand() *cobra.Command {
	var graph bool
	cmd := &cobra.Command{
		Use:   "roles",
		Short: "List the five roles, their start order and whether this binary builds them",
		Long: "List the five roles, their start order and whether this binary builds them.\n\n" +
			"--graph prints the module graph of the configured roles instead: the order they start in (they stop in\n" +
			"reverse) and, for each, the roles of this process it starts after.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if graph {
				return a.printGraph(cmd)
			}
			for i, e := range node.Roles() { // every role of the table is built into this binary
				fmt.Fprintf(cmd.OutOrStdout(), "%d  %-9s %-10s %s\n", i+1, e.Name, "built", e.Summary)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&graph, "graph", false, "print the module graph of the configured roles")
	config.RegisterFlags(cmd.Flags(), ptr(node.DefaultConfig()), "data_dir")
	keyFlagsHelp(cmd)
	return cmd
}

// printGraph prints the module graph of the loaded config.
func (a *app) printGraph(cmd *cobra.Command) error {
	cfg, err := a.load()
	if err != nil {
		return cli.Exit(cli.ExitFailure, err)
	}
	g, err := node.Graph(cfg)
	if err != nil {
		return cli.Exit(cli.ExitFailure, err)
	}
	fmt.Fprint(cmd.OutOrStdout(), g.String())
	return nil
}

func (a *app) versionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print ron's version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprintln(cmd.OutOrStdout(), "ron "+node.Version)
			return nil
		},
	}
}

func (a *app) configCommand() *cobra.Command {
	c := &cobra.Command{Use: "config", Short: "Check or print the effective configuration"}
	check := &cobra.Command{
		Use:   "check",
		Short: "Validate the configuration (defaults < file < RON_* env < flags)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if _, err := a.load(); err != nil {
				return cli.Exit(cli.ExitFailure, err)
			}
			fmt.Fprintln(cmd.OutOrStdout(), "config ok")
			return nil
		},
	}
	print := &cobra.Command{
		Use:   "print",
		Short: "Print the effective configuration as TOML, secrets redacted",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := a.load()
			if err != nil {
				return cli.Exit(cli.ExitFailure, err)
			}
			fmt.Fprint(cmd.OutOrStdout(), config.TOML(cfg, true))
			return nil
		},
	}
	for _, sub := range []*cobra.Command{check, print} {
		config.RegisterFlags(sub.Flags(), ptr(node.DefaultConfig()), "data_dir")
		c.AddCommand(sub)
	}
	return c
}

// keyFlagsHelp shortens the help of commands that take every config key.
func keyFlagsHelp(cmd *cobra.Command) {
	cmd.Flags().SortFlags = false
	cmd.Long = strings.TrimSpace(cmd.Long + "\n\nEvery config key is also a flag: --section.key (e.g. --storage.listen, --admin.listen).")
}
