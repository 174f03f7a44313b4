// Package doctor checks that a ron node can run and what to fix when it
// cannot: the config, the data dir (writable, fsync works), free space, the
// clock, the listen ports, the root key's permissions and the role
// dependencies' reachability. `ron doctor` (roles/doctor.go) builds a Node
// from the effective config and prints the Report.
package doctor

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/ronhq/ron/httpx/client"
)

// Level is a check's outcome.
type Level string

// The outcomes: OK and Warn leave `ron doctor` exiting 0, Fail makes it
// exit 1, Skip means the check did not apply.
const (
	OK   Level = "ok"
	Warn Level = "warn"
	Fail Level = "fail"
	Skip Level = "skip"
)

// Result is one check's outcome. Check is a stable name ("config",
// "data_dir", "fsync", "free_space", "clock", "port:<key>", "root_key",
// "dependency:<key>"); Fix says what to do when Level is Warn or Fail.
type Result struct {
	Check   string `json:"check"`
	Level   Level  `json:"level"`
	Message string `json:"message"`
	Fix     string `json:"fix,omitempty"`
}

// Report is every check's result in order. OK is false when any failed.
type Report struct {
	OK      bool     `json:"ok"`
	Results []Result `json:"checks"`
}

// Listener is a listen address the node will bind, by config key.
type Listener struct {
	Key  string // "admin.listen", "storage.listen", …
	Addr string
}

// Dependency is a URL a role needs reachable, by config key. An Optional
// one (index peers, announce targets) only warns when unreachable.
type Dependency struct {
	Key      string // "gateway.storage_url", "index.peers", …
	URL      string
	Optional bool
}

// Node is what the checks know of the node, from its effective config.
type Node struct {
	ConfigFile   string // "" = built-in defaults and environment only
	ConfigErr    error  // loading or validating failed: only "config" is checked
	Roles        []string
	DataDir      string
	Amnesia      bool
	MinFreeBytes uint64     // storage.min_free_bytes when storage is enabled, else 0
	Listeners    []Listener // admin first, then the enabled roles
	Dependencies []Dependency
	MaxClockSkew time.Duration // clock farther off fails; 0 = DefaultMaxClockSkew
	RootKeyFile  string        // cluster.root_key_file; "" = <DataDir>/keys/root.key
}

// Space is a filesystem's free and total bytes (for unprivileged users).
type Space struct{ Avail, Total uint64 }

// System is how checks reach the machine; zero fields take the real thing.
type System struct {
	HTTP    *http.Client                // nil: a client without keep-alives
	Timeout time.Duration               // per network probe; 0 = DefaultTimeout
	Now     func() time.Time            // nil: time.Now
	Statfs  func(string) (Space, error) // nil: statfs(2)
	Getuid  func() int                  // nil: os.Getuid
}

// DefaultTimeout bounds each network probe.
const DefaultTimeout = 2 * time.Second

// DefaultMaxClockSkew is the clock offset that fails when Node sets none
// (the registry's default clock_skew).
const DefaultMaxClockSkew = 5 * time.Minute

func (s System) withDefaults() System {
	if s.HTTP == nil { // no keep-alives: nothing idles after Run
		s.HTTP = &http.Client{Transport: client.NewTransport(client.TransportOptions{Base: client.BaseBare, DisableKeepAlives: true})}
	}
	if s.Timeout <= 0 {
		s.Timeout = DefaultTimeout
	}
	if s.Now == nil {
		s.Now = time.Now
	}
	if s.Statfs == nil {
		s.Statfs = statfs
	}
	if s.Getuid == nil {
		s.Getuid = os.Getuid
	}
	return s
}

// Run runs every check in order, each network probe under its own
// timeout and all under ctx. An invalid config stops after "config".
func Run(ctx context.Context, n Node, sys System) Report {
	sys = sys.withDefaults()
	rep := Report{Results: []Result{checkConfig(n)}}
	if n.ConfigErr == nil {
		rep.Results = append(rep.Results, checkDataDir(n, sys)...)
		rep.Results = append(rep.Results, checkSpace(n, sys), checkClock(ctx, n, sys))
		rep.Results = append(rep.Results, checkPorts(ctx, n, sys)...)
		rep.Results = append(rep.Results, checkRootKey(n, sys))
		rep.Results = append(rep.Results, checkDependencies(ctx, n, sys)...)
	}
	rep.OK = true
	for _, r := range rep.Results {
		if r.Level == Fail {
			rep.OK = false
		}
	}
	return rep
}

func checkConfig(n Node) Result {
	src := n.ConfigFile
	if src == "" {
		src = "built-in defaults (no --config or RON_CONFIG)"
	}
	if n.ConfigErr != nil {
		return Result{Check: "config", Level: Fail, Message: "config invalid: " + n.ConfigErr.Error(),
			Fix: "correct the key named above in " + src + ", its RON_* variable or flag; `ron config check` validates; no other check ran"}
	}
	return Result{Check: "config", Level: OK, Message: fmt.Sprintf("config valid: %s; roles %s", src, strings.Join(n.Roles, ", "))}
}

// WriteText prints the report for a terminal: one line per check, a fix
// line under every warning and failure, and a summary.
func (r Report) WriteText(w io.Writer) {
	counts := map[Level]int{}
	for _, res := range r.Results {
		counts[res.Level]++
		fmt.Fprintf(w, "%-5s %-32s %s\n", strings.ToUpper(string(res.Level)), res.Check, res.Message)
		if res.Fix != "" && (res.Level == Warn || res.Level == Fail) {
			fmt.Fprintf(w, "      %-32s fix: %s\n", "", res.Fix)
		}
	}
	fmt.Fprintf(w, "\n%d ok, %d warnings, %d failed, %d skipped\n", counts[OK], counts[Warn], counts[Fail], counts[Skip])
}
