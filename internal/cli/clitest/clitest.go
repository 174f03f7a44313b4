// Package clitest runs command lines in tests the way main runs them: a
// bare `ron` root with the commands under test mounted, the error mapped to
// an exit code.
package clitest

import (
	"bytes"
	"context"
	"errors"

	"github.com/spf13/cobra"

	"github.com/ronhq/ron/internal/cli"
)

// Run is the outcome of one command line.
type Run struct {
	Code           int // exit code, as main would exit
	Stdout, Stderr string
	Err            error
}

// TokenEnv is a getenv that answers RON_TOKEN with token ("" none) and
// every other variable with "".
func TokenEnv(token string) func(string) string {
	return func(k string) string {
		if k == "RON_TOKEN" {
			return token
		}
		return ""
	}
}

// Execute runs `ron args…` with cmds mounted.
func Execute(cmds []*cobra.Command, args ...string) Run {
	root := &cobra.Command{Use: "ron", SilenceUsage: true, SilenceErrors: true}
	root.AddCommand(cmds...)
	var out, errw bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errw)
	root.SetArgs(args)
	err := root.ExecuteContext(context.Background())
	code := cli.ExitOK
	var ee *cli.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.Code
	case err != nil:
		code = cli.ExitFailure
	}
	return Run{Code: code, Stdout: out.String(), Stderr: errw.String(), Err: err}
}
