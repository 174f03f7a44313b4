// Command ron runs any subset of ron's five roles in one process and talks to
// them from the command line.
package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/ronhq/ron/internal/cli"
	"github.com/ronhq/ron/internal/cli/root"
)

func main() {
	err := root.NewCommand(os.Exit).Execute()
	if err == nil {
		return
	}
	var ee *cli.ExitError
	if !errors.As(err, &ee) {
		fmt.Fprintln(os.Stderr, "ron:", err)
		os.Exit(cli.ExitFailure)
	}
	if !ee.Reported {
		fmt.Fprintln(os.Stderr, "ron:", err)
	}
	os.Exit(ee.Code)
}
