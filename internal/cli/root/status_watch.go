package root

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/spf13/cobra"

	"github.com/ronhq/ron/internal/cli"
	"github.com/ronhq/ron/internal/node"
)

// clearScreen moves the cursor home and clears a terminal.
const clearScreen = "\x1b[H\x1b[2J"

// runWatch is `ron status -w`: redraw every interval until SIGINT/SIGTERM.
func runWatch(cmd *cobra.Command, admin, output string, interval time.Duration) error {
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	w := cmd.OutOrStdout()
	tty := false
	if f, ok := w.(*os.File); ok && output == "text" {
		tty = isatty.IsTerminal(f.Fd())
	}
	return watchStatus(ctx, w, watchOptions{admin: admin, output: output, interval: interval, tick: ticker.C, clear: tty})
}

// watchOptions configures watchStatus.
type watchOptions struct {
	admin, output string
	interval      time.Duration    // shown in the frame header
	tick          <-chan time.Time // one frame per tick after the first
	clear         bool             // clear the terminal before each text frame
}

// watchStatus draws a frame at once and then on every tick until ctx ends,
// and returns the last probe's exit error (nil ready, 1 not ready, 2
// unreachable). A text frame starts with a "ron status" header line (after
// a screen clear on a terminal); a JSON frame is one line: the status
// document, or {"error":…} when unreachable.
func watchStatus(ctx context.Context, w io.Writer, o watchOptions) error {
	var last error
	for {
		st, raw, err := fetchStatus(ctx, o.admin)
		if ctx.Err() != nil {
			return last
		}
		last = drawFrame(w, o, st, raw, err)
		select {
		case <-ctx.Done():
			return last
		case <-o.tick:
		}
	}
}

// drawFrame writes one frame and returns its exit error.
func drawFrame(w io.Writer, o watchOptions, st *node.Status, raw []byte, err error) error {
	if o.output == "json" {
		line := raw
		if err != nil {
			line, _ = json.Marshal(map[string]string{"error": err.Error()})
		}
		var buf bytes.Buffer
		if json.Compact(&buf, line) != nil {
			buf.Reset()
			buf.Write(bytes.TrimSpace(line))
		}
		buf.WriteByte('\n')
		_, _ = w.Write(buf.Bytes())
	} else {
		if o.clear {
			fmt.Fprint(w, clearScreen)
		}
		fmt.Fprintf(w, "ron status %s  every %s  %s  (Ctrl-C to stop)\n", o.admin, o.interval, time.Now().Format(time.TimeOnly))
		if err != nil {
			fmt.Fprintf(w, "unreachable: %v\n\n", err)
		} else {
			printStatus(w, st)
			fmt.Fprintln(w)
		}
	}
	if err != nil {
		return cli.Exit(cli.ExitUnreachable, err)
	}
	return statusExit(st)
}
