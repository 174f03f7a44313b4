// Command cpbench holds the measurements of scripts/bench/controlplane.sh
// (the control plane of docs/cluster.md §14: leader failover and name
// compare-and-swap writes). The script starts, restarts and stops the ron
// processes; this tool observes and loads them (and, for a failover, kills
// the leader itself, so that the kill and the clock reading are one step).
// Three subcommands, each printing one JSON document on stdout:
//
//	cpbench leader   -admin 127.0.0.1:8080,… [-caught-up] [-timeout 60s]
//	cpbench failover -admin A,B,C -index http://127.0.0.1:7304,… -pid P,P,P -token T [-run N] [-timeout 1s]
//	cpbench cas      -url http://127.0.0.1:7304[,…] -token T [-c 8] [-duration 10s] [-prefix cas]
//	cpbench regkeys  -dir DIR [-n 3] [-m 3]
//	cpbench reg      -url http://127.0.0.1:9444[,…] -token T -signers DIR/signers.json [-c 8] [-duration 10s] [-prefix reg]
//
// leader: polls every node's /api/v1/status until all of them name the
// same leader, that node says it leads, every node lists every node as a
// voter that gossip shows alive, and (-caught-up) every node has applied as
// far as the leader; prints the leader and each node's applied index.
//
// failover: with an agreed leader, one writer sends unconditional PUT
// /names/{name} through a node that is not the leader (closed loop, one
// request at a time, a short client timeout); after a warm-up the tool
// sends SIGKILL to the leader's pid and measures the time from the kill to
// the first 200 of a request sent after the kill. Meanwhile it polls the
// survivors' status to split that time: when a survivor stopped naming the
// old leader, when one became leader, when the writer's node knew it.
//
// cas: -c writers for -duration, writer i on -url[i mod n] with its own
// name, each write a compare-and-swap (If-None-Match: * first, then
// If-Match on the version the last write returned); writes per second and
// latency percentiles of the acknowledged writes, refusals counted by kind.
//
// regkeys: n fresh Ed25519 signers; writes DIR/trust-roots.json (the
// registry's trust roots, quorum m of n) and DIR/signers.json (their
// private seeds, for reg and failover -registry-signers).
//
// reg: -c writers race to extend the registry: writer i on -url[i mod n]
// reads HEAD, proposes HEAD+1, sends the quorum's approvals at once and
// commits; a 409 chain_mismatch at any step (another writer won) re-reads
// HEAD (taking the 409's head_version when the re-read is behind it) and
// starts over. Acknowledged commits per second, latency percentiles of the
// whole cycle and of the commit request, lost races, refusals by kind.
// failover -registry-signers F runs the failover with registry cycles as
// the writes.
//
// Exit 1 when the measurement fails (errors, timeouts), 2 on bad flags.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// errUsage lists the subcommands.
var errUsage = errors.New("usage: cpbench leader|failover|cas|regkeys|reg [flags] (-h for a subcommand's flags)")

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run parses and runs one subcommand; it returns the exit code.
func run(args []string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	out, err := dispatch(ctx, args)
	var bad *usageError
	switch {
	case errors.As(err, &bad):
		fmt.Fprintln(stderr, "cpbench:", err)
		return 2
	case err != nil:
		fmt.Fprintln(stderr, "cpbench:", err)
		return 1
	}
	if err := json.NewEncoder(stdout).Encode(out); err != nil {
		fmt.Fprintln(stderr, "cpbench:", err)
		return 1
	}
	return 0
}

// usageError marks a bad command line (exit 2).
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

// dispatch runs the subcommand named by args[0].
func dispatch(ctx context.Context, args []string) (any, error) {
	if len(args) == 0 {
		return nil, &usageError{errUsage}
	}
	switch args[0] {
	case "leader":
		cfg, err := parseLeader(args[1:])
		if err != nil {
			return nil, &usageError{err}
		}
		return runLeader(ctx, cfg)
	case "failover":
		cfg, err := parseFailover(args[1:])
		if err != nil {
			return nil, &usageError{err}
		}
		return runFailover(ctx, cfg, killProcess)
	case "cas":
		cfg, err := parseCAS(args[1:])
		if err != nil {
			return nil, &usageError{err}
		}
		return runCAS(ctx, cfg)
	case "regkeys":
		cfg, err := parseRegKeys(args[1:])
		if err != nil {
			return nil, &usageError{err}
		}
		return runRegKeys(cfg)
	case "reg":
		cfg, err := parseReg(args[1:])
		if err != nil {
			return nil, &usageError{err}
		}
		return runReg(ctx, cfg)
	}
	return nil, &usageError{fmt.Errorf("unknown subcommand %q; %w", args[0], errUsage)}
}

// killProcess sends SIGKILL to pid.
func killProcess(pid int) error { return syscall.Kill(pid, syscall.SIGKILL) }
