// Command tiledump extracts every tile of a PMTiles archive with ron's own
// reader (roles/edge/pmtiles) into a folder laid out like the edge's tile
// URLs, so that scripts/bench/edge.sh can have nginx serve the very bytes the
// edge serves, as static files:
//
//	tiledump -archive stamen_toner_z3.pmtiles -out www/tiles/toner \
//	  -prefix /tiles/toner -list paths.txt
//
// It writes <out>/<z>/<x>/<y>.<ext> holding each tile's stored bytes (every
// tile id of a run-length entry gets its own file) and, with -list, one URL
// path <prefix>/<z>/<x>/<y>.<ext> per line in tile id order. <ext> is the
// first extension of the archive's tile type (docs/edge.md §6.2; bin when
// unknown). Only archives whose tiles are stored uncompressed (compression
// none or unknown) are accepted: a static server would need a
// Content-Encoding per file for the others. Exit 1 on any error.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "tiledump:", err)
		os.Exit(1)
	}
}

// run parses args, dumps the archive and writes the path list; a summary
// line goes to out.
func run(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("tiledump", flag.ContinueOnError)
	archive := fs.String("archive", "", "PMTiles archive to read (required)")
	dir := fs.String("out", "", "folder to write <z>/<x>/<y>.<ext> into (required; created)")
	prefix := fs.String("prefix", "", "URL path prefix of the -list lines, e.g. /tiles/toner")
	list := fs.String("list", "", "file to write the URL paths to, one per line (optional)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	switch {
	case fs.NArg() > 0:
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	case *archive == "" || *dir == "":
		return fmt.Errorf("-archive and -out are required")
	case *prefix != "" && (!strings.HasPrefix(*prefix, "/") || strings.HasSuffix(*prefix, "/")):
		return fmt.Errorf("-prefix %q: want a path starting with / and not ending with /", *prefix)
	}
	tiles, err := Dump(*archive, *dir)
	if err != nil {
		return err
	}
	if *list != "" {
		if err := writeList(*list, *prefix, tiles); err != nil {
			return err
		}
	}
	_, err = fmt.Fprintf(out, "tiledump: %d tiles of %s written to %s\n", len(tiles), *archive, *dir)
	return err
}

// writeList writes prefix + "/" + each tile's relative path, one per line.
func writeList(path, prefix string, tiles []string) error {
	var b strings.Builder
	for _, t := range tiles {
		b.WriteString(prefix + "/" + t + "\n")
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}
