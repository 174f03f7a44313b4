// Package packcmd is `ron pack verify` and `ron pack inspect`
// (docs/edge.md §12): offline checks of one local pack file through the
// same open-and-verify code the edge mounts with (packs.Open). They need no
// server and no token. It is a command package: the command tree
// (internal/cli/root) mounts it; no role imports it.
package packcmd

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ronhq/ron/internal/cli"
	"github.com/ronhq/ron/roles/edge/packs"
)

// Command returns `ron pack` with its verify and inspect subcommands. Both
// exit 1 (cli.ExitFailure) when the file is invalid or cannot be opened.
func Command() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "pack",
		Short: "Check and describe local tile packs (.pmtiles, .mbtiles)",
	}
	cmd.AddCommand(verifyCommand(), inspectCommand())
	return cmd
}

func verifyCommand() *cobra.Command {
	var full bool
	cmd := &cobra.Command{
		Use:   "verify FILE [--full]",
		Short: "Run the edge's mount checks on a pack file",
		Long: "Runs the checks the edge runs before mounting a pack (docs/edge.md §4.2): the basic level, " +
			"or both levels with --full. Exit 0 when the pack is valid, 1 when it is not.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			level := packs.VerifyBasic
			if full {
				level = packs.VerifyFull
			}
			p, err := packs.Open(ctxOf(cmd), args[0], packs.OpenOptions{Verify: level})
			if err != nil {
				reason := strings.TrimPrefix(err.Error(), args[0]+": ")
				fmt.Fprintf(cmd.OutOrStdout(), "invalid  %s: %s\n", args[0], reason)
				return cli.Reported(cli.ExitFailure, err)
			}
			defer p.Close()
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "ok  %s  %s  %s  z%d-%d  id %s  (%s)\n", args[0], p.Kind(),
				p.TileType(), p.MinZoom(), p.MaxZoom(), p.ID(), level)
			for _, w := range p.Warnings() {
				fmt.Fprintf(cmd.ErrOrStderr(), "warning: %s\n", w)
			}
			return err
		},
	}
	cmd.Flags().BoolVar(&full, "full", false, "also run the full checks (every leaf directory and tile entry; tile hashes)")
	return cmd
}

func inspectCommand() *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "inspect FILE [-o json]",
		Short: "Print a pack's header, bounds, zooms, tile type, counts and metadata",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := cli.CheckOutput(output); err != nil {
				return err
			}
			ctx := ctxOf(cmd)
			p, err := packs.Open(ctx, args[0], packs.OpenOptions{})
			if err != nil {
				return cli.Exit(cli.ExitFailure, err)
			}
			defer p.Close()
			info, err := p.Inspect(ctx)
			if err != nil {
				return cli.Exit(cli.ExitFailure, err)
			}
			if output == "json" {
				return cli.PrintJSON(cmd.OutOrStdout(), info)
			}
			return printInfo(cmd.OutOrStdout(), info)
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "text", "output format: text or json")
	return cmd
}

// ctxOf is the command's context, or Background when run without one.
func ctxOf(cmd *cobra.Command) context.Context {
	if ctx := cmd.Context(); ctx != nil {
		return ctx
	}
	return context.Background()
}

// printInfo writes info as aligned "key: value" lines, then the metadata.
func printInfo(w io.Writer, in packs.Info) error {
	rows := [][2]string{
		{"file", in.Path}, {"kind", string(in.Kind)}, {"bytes", fmt.Sprint(in.Bytes)},
		{"modified", in.ModTime.UTC().Format("2006-01-02T15:04:05.000000000Z")}, {"id", in.ID},
		{"tile type", in.TileType + " (" + in.ContentType + ")"}, {"tile compression", in.Compression},
		{"zoom", fmt.Sprintf("%d-%d", in.MinZoom, in.MaxZoom)}, {"bounds", fmt.Sprintf("%g,%g,%g,%g", in.Bounds[0], in.Bounds[1], in.Bounds[2], in.Bounds[3])},
		{"center", fmt.Sprintf("%g,%g,%g", in.Center[0], in.Center[1], in.Center[2])},
		{"entries", fmt.Sprint(in.Entries)}, {"tiles", fmt.Sprint(in.Tiles)},
	}
	if in.Header != nil {
		rows = append(rows, headerRows(in)...)
	}
	for _, warn := range in.Warnings {
		rows = append(rows, [2]string{"warning", warn})
	}
	for _, r := range rows {
		if _, err := fmt.Fprintf(w, "%-17s %s\n", r[0]+":", r[1]); err != nil {
			return err
		}
	}
	return printMetadata(w, in.Metadata)
}

// headerRows are the PMTiles-only lines: blob and root counts and the header.
func headerRows(in packs.Info) [][2]string {
	h := in.Header
	return [][2]string{{"contents", fmt.Sprint(in.Contents)}, {"root entries", fmt.Sprint(in.RootEntries)},
		{"header", fmt.Sprintf("version %d, clustered %v, internal compression %s, tile compression %s, tile type %s",
			h.Version, h.Clustered, h.InternalCompression, h.TileCompression, h.TileType)},
		{"header zoom", fmt.Sprintf("%d-%d, center %g,%g z%g", h.MinZoom, h.MaxZoom, h.Center[0], h.Center[1], h.Center[2])},
		{"header bounds", fmt.Sprintf("%g,%g,%g,%g", h.Bounds[0], h.Bounds[1], h.Bounds[2], h.Bounds[3])},
		{"root directory", fmt.Sprintf("offset %d, length %d", h.RootOffset, h.RootLength)},
		{"metadata section", fmt.Sprintf("offset %d, length %d", h.MetadataOffset, h.MetadataLength)},
		{"leaf directories", fmt.Sprintf("offset %d, length %d", h.LeafOffset, h.LeafLength)},
		{"tile data", fmt.Sprintf("offset %d, length %d", h.TileDataOffset, h.TileDataLength)},
		{"header counts", fmt.Sprintf("addressed %d, entries %d, contents %d", h.AddressedTiles, h.TileEntries, h.TileContents)},
	}
}
