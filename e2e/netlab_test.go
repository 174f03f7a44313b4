package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ronhq/ron/internal/tooltest"
)

// ipLimit bounds one `ip` invocation (they take milliseconds).
const ipLimit = 10 * time.Second

// netLab is a small network of Linux network namespaces for partition
// tests, built with iproute2 only (no iptables):
//
//   - one bridge rn<X>-b in the root namespace with 10.77.X.1/24, where X
//     (1…254) is held for the lab's lifetime through an exclusive flock on
//     $TMPDIR/ron-e2e-netlab/<X>.lock, so concurrent labs of this or another
//     test process never share a subnet or a name;
//   - per node i a namespace rn<X>-n<i> with lo up and the address
//     10.77.X.(10+i)/24 on rn<X>-p<i>, a veth whose peer rn<X>-h<i> is a
//     port of the bridge.
//
// The test process stays in the root namespace and reaches every node
// through the bridge, whatever the partition. Every name (≤ 11 bytes, below
// the 15-byte limit of interface names) starts with rn<X>-. A netLab is
// owned by the test that made it and is not safe for concurrent use.
type netLab struct {
	t      *testing.T
	ipBin  string
	x      int             // the third octet and the name's number
	n      int             // nodes
	cuts   map[[2]int]bool // installed blackhole routes: {from, to}
	prefix string          // "rn<X>-"
}

// newNetLab builds a lab of n nodes and removes it in t.Cleanup (also when
// the test fails). It skips the test when not run as root; when `ip` is
// missing or cannot create a namespace it skips too, or fails under
// RON_REQUIRE_TOOLS (scripts/test.sh, CI). Any other setup error fails.
func newNetLab(t *testing.T, n int) *netLab {
	t.Helper()
	if n < 1 || n > 200 {
		t.Fatalf("newNetLab: %d nodes, want 1…200", n)
	}
	if os.Geteuid() != 0 {
		t.Skip("the network-namespace lab needs root (ip netns add)")
	}
	ipBin, err := exec.LookPath("ip")
	if err != nil {
		tooltest.Missing(t, "the network-namespace lab needs iproute2's ip: %v", err)
	}
	l := &netLab{t: t, ipBin: ipBin, n: n, cuts: map[[2]int]bool{}}
	l.x = l.claimSubnet()
	l.prefix = fmt.Sprintf("rn%d-", l.x)
	t.Cleanup(l.remove) // registered first: runs after the cleanups of processes started in the lab
	l.build()
	return l
}

// claimSubnet takes the flock of a free third octet, scanning 1…254 from
// one derived from the pid, and removes what a crashed earlier holder of it
// left behind. An octet some interface outside the lab already uses is
// passed over. The lock is released in t.Cleanup.
func (l *netLab) claimSubnet() int {
	l.t.Helper()
	dir := filepath.Join(os.TempDir(), "ron-e2e-netlab")
	if err := os.MkdirAll(dir, 0o777); err != nil {
		l.t.Fatal(err)
	}
	start := os.Getpid() % 254
	for i := range 254 {
		x := 1 + (start+i)%254
		lock, ok := lockHost(dir, fmt.Sprint(x))
		if !ok {
			continue
		}
		l.t.Cleanup(func() { lock.Close() }) // after remove (cleanups run last-in first-out)
		l.prefix = fmt.Sprintf("rn%d-", x)
		l.purge()
		if out := l.ipOut("-o", "-4", "addr", "show", "to", fmt.Sprintf("10.77.%d.0/24", x)); out != "" {
			lock.Close()
			continue
		}
		return x
	}
	l.t.Fatal("netLab: every subnet 10.77.1…254.0/24 is held by another lab")
	return 0
}

// build creates the bridge and, per node, its namespace and veth pair.
func (l *netLab) build() {
	l.t.Helper()
	if out, err := l.run("netns", "add", l.ns(0)); err != nil {
		tooltest.Missing(l.t, "the network-namespace lab cannot create a namespace (ip netns add %s): %v: %s", l.ns(0), err, out)
	}
	bridge := l.prefix + "b"
	l.ip("link", "add", bridge, "type", "bridge")
	l.ip("addr", "add", fmt.Sprintf("10.77.%d.1/24", l.x), "dev", bridge)
	l.ip("link", "set", bridge, "up")
	for i := range l.n {
		if i > 0 {
			l.ip("netns", "add", l.ns(i))
		}
		host, peer := fmt.Sprintf("%sh%d", l.prefix, i), fmt.Sprintf("%sp%d", l.prefix, i)
		l.ip("link", "add", host, "type", "veth", "peer", "name", peer, "netns", l.ns(i))
		l.ip("link", "set", host, "master", bridge, "up")
		l.ip("-n", l.ns(i), "link", "set", "lo", "up")
		l.ip("-n", l.ns(i), "addr", "add", l.addr(i)+"/24", "dev", peer)
		l.ip("-n", l.ns(i), "link", "set", peer, "up")
	}
}

// remove deletes every namespace and link of the lab (t.Cleanup); an error
// fails the test.
func (l *netLab) remove() {
	if err := l.purgeErr(); err != nil {
		l.t.Errorf("netLab cleanup: %v", err)
	}
}

// purge deletes every namespace and root-namespace link whose name starts
// with the lab's prefix, failing the test on an error.
func (l *netLab) purge() {
	l.t.Helper()
	if err := l.purgeErr(); err != nil {
		l.t.Fatal(err)
	}
}

// purgeErr is purge returning the first error. Deleting a namespace also
// deletes the veth end inside it and so its peer on the bridge.
func (l *netLab) purgeErr() error {
	nss, err := l.run("netns", "list")
	if err != nil {
		return fmt.Errorf("ip netns list: %v: %s", err, nss)
	}
	for _, line := range strings.Split(nss, "\n") {
		if f := strings.Fields(line); len(f) > 0 && strings.HasPrefix(f[0], l.prefix) {
			if out, err := l.run("netns", "del", f[0]); err != nil {
				return fmt.Errorf("ip netns del %s: %v: %s", f[0], err, out)
			}
		}
	}
	links, err := l.run("-o", "link", "show")
	if err != nil {
		return fmt.Errorf("ip link show: %v: %s", err, links)
	}
	for _, line := range strings.Split(links, "\n") {
		// "7: rn12-b: <BROADCAST,…" or "8: rn12-h0@if2: <…"
		f := strings.Fields(line)
		if len(f) < 2 || !strings.HasPrefix(f[1], l.prefix) {
			continue
		}
		name, _, _ := strings.Cut(strings.TrimSuffix(f[1], ":"), "@")
		if out, err := l.run("link", "del", name); err != nil && !strings.Contains(out, "Cannot find device") {
			return fmt.Errorf("ip link del %s: %v: %s", name, err, out)
		}
	}
	return nil
}

// ns is node i's namespace name.
func (l *netLab) ns(i int) string { return fmt.Sprintf("%sn%d", l.prefix, i) }

// addr is node i's IPv4 address, 10.77.X.(10+i): ron's listeners inside
// node i must bind it (127.0.0.1 there is the namespace's own loopback,
// unreachable from the test process).
func (l *netLab) addr(i int) string {
	l.check(i)
	return fmt.Sprintf("10.77.%d.%d", l.x, 10+i)
}

// addrs are the addresses of nodes 0…n-1.
func (l *netLab) addrs() []string {
	out := make([]string, l.n)
	for i := range out {
		out[i] = l.addr(i)
	}
	return out
}

// command returns `ip netns exec <ns of i> name args…`, not started. ip
// enters the namespace and execs name in its own process, so once started
// the Cmd's pid is the program's own (signals reach it, not a wrapper);
// until that exec, a moment after Start, the pid still runs ip.
func (l *netLab) command(i int, name string, args ...string) *exec.Cmd {
	return l.commandContext(context.Background(), i, name, args...)
}

// commandContext is command whose process is killed when ctx ends
// (exec.CommandContext).
func (l *netLab) commandContext(ctx context.Context, i int, name string, args ...string) *exec.Cmd {
	l.check(i)
	return exec.CommandContext(ctx, l.ipBin, append([]string{"netns", "exec", l.ns(i), name}, args...)...)
}

// partition makes the lab's network exactly this split, replacing any
// earlier one: every pair of nodes in different groups is cut in both
// directions by blackhole routes (in A's namespace towards B's /32 and the
// reverse); nodes in the same group reach each other. A node in no group
// is cut from every other node (a group of its own). The test process in
// the root namespace keeps reaching every node. A blackhole drops a
// packet at its sender, which sees EINVAL (connect, sendto) at once; the
// other side of a cut pair sees its packets arrive and the replies lost,
// so its connects time out. Calling it again with the same groups changes
// nothing. An index out of range or in two groups fails the test.
func (l *netLab) partition(groups ...[]int) {
	l.t.Helper()
	group := l.groupOf(groups)
	want := map[[2]int]bool{}
	for a := range l.n {
		for b := range l.n {
			if group[a] != group[b] {
				want[[2]int{a, b}] = true
			}
		}
	}
	l.setCuts(want)
}

// groupOf maps each node to its group's index in groups, or to a group of
// its own (-1-i) when it is in none.
func (l *netLab) groupOf(groups [][]int) []int {
	l.t.Helper()
	group := make([]int, l.n)
	for i := range group {
		group[i] = -1 - i
	}
	for g, members := range groups {
		for _, i := range members {
			l.check(i)
			if group[i] >= 0 {
				l.t.Fatalf("netLab.partition: node %d is in groups %d and %d", i, group[i], g)
			}
			group[i] = g
		}
	}
	return group
}

// heal removes every blackhole route of every node (also any not set by
// partition); the lab is whole again. Calling it again changes nothing.
func (l *netLab) heal() {
	l.t.Helper()
	for i := range l.n {
		l.ip("-n", l.ns(i), "route", "flush", "type", "blackhole")
	}
	clear(l.cuts)
}

// setCuts installs the blackhole routes in want that are missing and
// deletes the installed ones not in want, in node order.
func (l *netLab) setCuts(want map[[2]int]bool) {
	l.t.Helper()
	for a := range l.n {
		for b := range l.n {
			cut := [2]int{a, b}
			switch {
			case want[cut] && !l.cuts[cut]:
				l.ip("-n", l.ns(a), "route", "replace", "blackhole", l.addr(b)+"/32")
				l.cuts[cut] = true
			case !want[cut] && l.cuts[cut]:
				l.ip("-n", l.ns(a), "route", "del", "blackhole", l.addr(b)+"/32")
				delete(l.cuts, cut)
			}
		}
	}
}

// blackholes lists the blackhole destinations in node i's routing table,
// as `ip route` prints them (e.g. "10.77.12.11").
func (l *netLab) blackholes(i int) []string {
	l.t.Helper()
	var out []string
	for _, line := range strings.Split(l.ipOut("-n", l.ns(i), "route", "show", "type", "blackhole"), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "blackhole" {
			out = append(out, f[1])
		}
	}
	return out
}

// inside reports whether process pid runs the program at exe in node i's
// namespace, with what it found: its /proc/<pid>/exe and network
// namespace against the inode of /var/run/netns/<ns> (where ip keeps it).
func (l *netLab) inside(i, pid int, exe string) (bool, string) {
	got, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
	if err != nil {
		return false, err.Error()
	}
	netns, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/net", pid))
	if err != nil {
		return false, err.Error()
	}
	var st syscall.Stat_t
	if err := syscall.Stat(filepath.Join("/var/run/netns", l.ns(i)), &st); err != nil {
		return false, err.Error()
	}
	want := fmt.Sprintf("net:[%d]", st.Ino)
	return got == exe && netns == want, fmt.Sprintf("pid %d runs %s in %s (want %s in %s)", pid, got, netns, exe, want)
}

// check fails the test when i is no node of the lab.
func (l *netLab) check(i int) {
	if i < 0 || i >= l.n {
		l.t.Fatalf("netLab: node %d out of range 0…%d", i, l.n-1)
	}
}

// ip runs `ip args…`, failing the test with its output on an error.
func (l *netLab) ip(args ...string) {
	l.t.Helper()
	if out, err := l.run(args...); err != nil {
		l.t.Fatalf("ip %s: %v: %s", strings.Join(args, " "), err, out)
	}
}

// ipOut is ip returning the trimmed output.
func (l *netLab) ipOut(args ...string) string {
	l.t.Helper()
	out, err := l.run(args...)
	if err != nil {
		l.t.Fatalf("ip %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(out)
}

// run runs `ip args…` bounded by ipLimit and returns its combined output.
func (l *netLab) run(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), ipLimit)
	defer cancel()
	out, err := exec.CommandContext(ctx, l.ipBin, args...).CombinedOutput()
	return string(out), err
}

// TestNetLab checks the lab without ron: partition installs exactly the
// blackhole routes of the split (a node in no group cut from all), again
// with the same groups changes nothing, heal removes them all; a command
// runs in its node's namespace under the Cmd's own pid; the lab's
// namespaces and bridge are gone after the test that made it.
func TestNetLab(t *testing.T) {
	var l *netLab
	t.Run("lab", func(t *testing.T) {
		l = newNetLab(t, 3)
		a := l.addrs()
		l.partition([]int{0}, []int{1})
		l.wantBlackholes([][]string{{a[1], a[2]}, {a[0], a[2]}, {a[0], a[1]}})
		for range 2 {
			l.partition([]int{0, 1})
			l.wantBlackholes([][]string{{a[2]}, {a[2]}, {a[0], a[1]}})
		}
		for range 2 {
			l.heal()
			l.wantBlackholes([][]string{nil, nil, nil})
		}
		l.checkCommand(1)
	})
	if l == nil || t.Failed() {
		return // skipped, or failed before the lab existed
	}
	if out, err := l.run("netns", "list"); err != nil || strings.Contains(out, l.prefix) {
		t.Errorf("namespaces left after the lab's test ended (%v):\n%s", err, out)
	}
	if out, err := l.run("-o", "link", "show"); err != nil || strings.Contains(out, l.prefix) {
		t.Errorf("links left after the lab's test ended (%v):\n%s", err, out)
	}
}

// wantBlackholes checks that node i's blackhole destinations are want[i]
// (in any order).
func (l *netLab) wantBlackholes(want [][]string) {
	l.t.Helper()
	for i, w := range want {
		got := l.blackholes(i)
		slices.Sort(got)
		w = slices.Sorted(slices.Values(w))
		if !slices.Equal(got, w) {
			l.t.Errorf("node %d blackholes %v, want %v", i, got, w)
		}
	}
}

// checkCommand starts `sleep` through l.command(i, …) and checks, once ip
// has exec'd it (bounded by readyLimit), that the Cmd's pid runs sleep
// itself inside node i's namespace; then kills it.
func (l *netLab) checkCommand(i int) {
	l.t.Helper()
	bin, err := exec.LookPath("sleep")
	if err == nil {
		bin, err = filepath.EvalSymlinks(bin)
	}
	if err != nil {
		l.t.Fatal(err)
	}
	cmd := l.command(i, "sleep", "600")
	if err := cmd.Start(); err != nil {
		l.t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	waitFor(l.t, readyLimit, pollEvery, "ip netns exec to exec sleep", func() (bool, string) {
		return l.inside(i, cmd.Process.Pid, bin)
	})
}
