package indexcmd

import (
	"context"
	"encoding/json"
	"net"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ronhq/ron/internal/cli"
	"github.com/ronhq/ron/internal/cli/clitest"
	"github.com/ronhq/ron/roles/index"
	"github.com/ronhq/ron/roles/index/indexapi"
	"github.com/ronhq/ron/store/manifest"
)

// cliRun is the outcome of one in-process command line.
type cliRun struct{ clitest.Run }

// nodeEnv returns a cli.Env whose index listener is addr ("" none).
func nodeEnv(dataDir, addr string) cli.Env {
	listen := map[string]string{}
	if addr != "" {
		listen["index"] = addr
	}
	return cli.Env{Node: func() (cli.Node, error) {
		return cli.Node{DataDir: dataDir, AdminListen: "127.0.0.1:1", Listen: listen}, nil
	}}
}

// runCLI executes `ron args…` with the index commands mounted, mapping the
// error to an exit code as main does.
func runCLI(t *testing.T, env cli.Env, token string, args ...string) cliRun {
	t.Helper()
	return cliRun{clitest.Execute(Commands(env, clitest.TokenEnv(token)), args...)}
}

// run executes a command line against n's configured listener.
func (n *cliNode) run(t *testing.T, args ...string) cliRun {
	t.Helper()
	return runCLI(t, nodeEnv(t.TempDir(), n.addr), n.token, args...)
}

// want checks the exit code and that stdout holds every wanted fragment.
func (r cliRun) want(t *testing.T, code int, stdout ...string) cliRun {
	t.Helper()
	if r.Code != code {
		t.Fatalf("exit %d, want %d (err %v)\nstdout: %s\nstderr: %s", r.Code, code, r.Err, r.Stdout, r.Stderr)
	}
	for _, s := range stdout {
		if !strings.Contains(r.Stdout, s) {
			t.Fatalf("stdout lacks %q:\n%s", s, r.Stdout)
		}
	}
	return r
}

func TestCLINameSetGet(t *testing.T) {
	n := newCLINode(t)
	n.run(t, "name", "set", "blog.example", idA).want(t, 0, "blog.example@1  "+idA+"  2026-11-22T10:00:00.000Z\n")
	n.run(t, "name", "set", "blog.example", idB, "--if-version", "1").want(t, 0, "blog.example@2  "+idB)
	n.run(t, "name", "get", "blog.example").want(t, 0, "blog.example@2  "+idB)
	n.run(t, "name", "get", "blog.example@1").want(t, 0, "blog.example@1  "+idA)

	var rec indexapi.NameRecord
	r := n.run(t, "name", "get", "blog.example", "-o", "json").want(t, 0)
	if err := json.Unmarshal([]byte(r.Stdout), &rec); err != nil || rec.Version != 2 || rec.B3 != idB ||
		rec.Name != "blog.example" || rec.UpdatedAt == "" {
		t.Fatalf("get -o json: %+v %v\n%s", rec, err, r.Stdout)
	}
	r = n.run(t, "name", "set", "new.example", idA, "--create-only", "-o", "json").want(t, 0)
	if err := json.Unmarshal([]byte(r.Stdout), &rec); err != nil || rec.Version != 1 || rec.B3 != idA {
		t.Fatalf("set -o json: %+v %v", rec, err)
	}
	n.run(t, "name", "get", "blog.example@9").want(t, 1)
	n.run(t, "name", "get", "none.example").want(t, 1)
}

func TestCLIPreconditionFailed(t *testing.T) {
	n := newCLINode(t)
	n.run(t, "name", "set", "blog.example", idA).want(t, 0)
	n.run(t, "name", "set", "blog.example", idB).want(t, 0)
	for _, tc := range []struct {
		args []string
		cur  string
	}{
		{[]string{"name", "set", "blog.example", idA, "--if-version", "1"}, "current version: 2\n"},
		{[]string{"name", "set", "blog.example", idA, "--create-only"}, "current version: 2\n"},
		{[]string{"name", "set", "other.example", idA, "--if-version", "3"}, "current version: none\n"},
		{[]string{"name", "rm", "blog.example", "--if-version", "1"}, "current version: 2\n"},
	} {
		r := n.run(t, tc.args...).want(t, 1)
		if r.Stderr != tc.cur || r.Stdout != "" {
			t.Fatalf("%v: stderr %q stdout %q, want stderr %q", tc.args, r.Stderr, r.Stdout, tc.cur)
		}
	}
	n.run(t, "name", "get", "blog.example").want(t, 0, "blog.example@2  "+idB)
}

func TestCLINameRmHistory(t *testing.T) {
	n := newCLINode(t)
	n.run(t, "name", "set", "h.example", idA).want(t, 0)
	n.run(t, "name", "set", "h.example", idB).want(t, 0)
	n.clk.Advance(1500 * time.Millisecond)
	n.run(t, "name", "rm", "h.example", "--if-version", "2").want(t, 0, "h.example@3  deleted  2026-11-22T10:00:01.500Z\n")
	n.run(t, "name", "rm", "h.example").want(t, 1)
	n.run(t, "name", "get", "h.example").want(t, 1)

	r := n.run(t, "name", "history", "h.example").want(t, 0)
	lines := strings.Split(strings.TrimSpace(r.Stdout), "\n")
	want := [][]string{
		{"VERSION", "TARGET", "UPDATED"},
		{"3", "deleted", "2026-11-22T10:00:01.500Z"},
		{"2", idB, "2026-11-22T10:00:00.000Z"},
		{"1", idA, "2026-11-22T10:00:00.000Z"},
	}
	if len(lines) != len(want) {
		t.Fatalf("history:\n%s", r.Stdout)
	}
	for i, l := range lines {
		if f := strings.Fields(l); strings.Join(f, " ") != strings.Join(want[i], " ") {
			t.Fatalf("history line %d %q, want %q", i, l, want[i])
		}
	}
	var h indexapi.NameHistory
	r = n.run(t, "name", "history", "h.example", "-o", "json").want(t, 0)
	if err := json.Unmarshal([]byte(r.Stdout), &h); err != nil || len(h.Versions) != 3 || !h.Versions[0].Deleted {
		t.Fatalf("history -o json: %+v %v", h, err)
	}
	n.run(t, "name", "history", "never.example").want(t, 1)
}

func TestCLIResolve(t *testing.T) {
	n := newCLINode(t)
	n.run(t, "name", "set", "site.example", idA).want(t, 0)
	m := ann(mustID(t, idA), "n1", time.Minute)
	m.Type = manifest.MediaType
	if _, _, err := index.NewLocalClient(n.h).Announce(context.Background(), []indexapi.Announcement{m}); err != nil {
		t.Fatal(err)
	}
	n.run(t, "resolve", "site.example").want(t, 0, "target     "+idA, "kind       manifest", "version    1",
		"source     local", "providers  1", "n1    http://n1:5303  -       "+manifest.MediaType)
	r := n.run(t, "resolve", "site.example", "--no-cache", "-o", "json").want(t, 0)
	var a indexapi.ResolveAnswer
	if err := json.Unmarshal([]byte(r.Stdout), &a); err != nil || a.Target != idA || a.Kind != "manifest" ||
		len(a.Providers) != 1 || a.NameVersion == nil || *a.NameVersion != 1 {
		t.Fatalf("resolve -o json: %+v %v", a, err)
	}
	n.run(t, "resolve", idA).want(t, 0, "key        "+idA, "providers  1")
	n.run(t, "resolve", "site.example@1").want(t, 0, "target     "+idA)
	n.run(t, "resolve", "never.example").want(t, 1)
	n.run(t, "resolve", idB).want(t, 1)
}

// TestCLIBadArguments: invalid arguments exit 1 before any request (the
// node's configured listener is unreachable, which would exit 2).
func TestCLIBadArguments(t *testing.T) {
	env := nodeEnv(t.TempDir(), closedAddr(t))
	for _, args := range [][]string{
		{"name", "set", "Bad_Name", idA},
		{"name", "set", "blog.example", "b3:xyz"},
		{"name", "set", "blog.example", strings.ToUpper(idA)},
		{"name", "set", "blog.example", idA, "--if-version", "1", "--create-only"},
		{"name", "set", "blog.example", idA, "--if-version", "0"},
		{"name", "set", "blog.example", idA, "--if-version", "x"},
		{"name", "set", "blog.example"},
		{"name", "get", "x@0"},
		{"name", "get", "blog.example@"},
		{"name", "get", "a..b"},
		{"name", "get", "blog.example", "-o", "yaml"},
		{"name", "rm", "-bad"},
		{"name", "rm", "blog.example", "--create-only"},
		{"name", "history", "bücher.example"},
		{"name", "bogus"},
		{"name"},
		{"resolve", "b3:zz"},
		{"resolve", "a/b"},
		{"resolve"},
	} {
		r := runCLI(t, env, "", args...)
		if r.Code != cli.ExitFailure || r.Err == nil {
			t.Errorf("%q: exit %d (err %v), want 1", args, r.Code, r.Err)
		}
	}
}

// TestCLIUnreachable: a server that refuses connections exits 2 (retries
// wait on the bubble's clock).
func TestCLIUnreachable(t *testing.T) {
	addr := closedAddr(t)
	synctest.Test(t, func(t *testing.T) {
		env := nodeEnv(t.TempDir(), addr)
		for _, args := range [][]string{
			{"name", "get", "blog.example"},
			{"name", "set", "blog.example", idA},
			{"name", "rm", "blog.example"},
			{"name", "history", "blog.example"},
			{"resolve", "blog.example"},
			{"resolve", idA, "--server", "http://" + addr},
		} {
			if r := runCLI(t, env, "tok", args...); r.Code != cli.ExitUnreachable {
				t.Errorf("%q: exit %d (err %v), want 2", args, r.Code, r.Err)
			}
		}
	})
}

// TestCLIServerFlag: --server overrides the configured listener, and with
// neither the command fails with exit 1.
func TestCLIServerFlag(t *testing.T) {
	n := newCLINode(t)
	env := nodeEnv(t.TempDir(), "")
	runCLI(t, env, n.token, "name", "set", "a.example", idA, "--server", "http://"+n.addr).want(t, 0, "a.example@1")
	r := runCLI(t, env, n.token, "name", "get", "a.example").want(t, 1)
	if !strings.Contains(r.Err.Error(), "--server") {
		t.Fatalf("error %v does not point at --server", r.Err)
	}
	// A write without a usable token is refused by the server: exit 1.
	runCLI(t, nodeEnv(t.TempDir(), n.addr), "", "name", "set", "b.example", idA).want(t, 1)
}

// closedAddr returns a loopback address nothing listens on.
func closedAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}
