package config

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestParseSize(t *testing.T) {
	good := map[string]Size{"0": 0, "4096": 4096, "1KiB": 1024, "64MiB": 64 << 20, "8GiB": 8 << 30, " 2 GiB ": 2 << 30, "12B": 12}
	for in, want := range good {
		got, err := ParseSize(in)
		if err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "-1", "1.5GiB", "8GB", "8 gib", "GiB", "x", "9223372036854775807GiB", "1e3"} {
		if _, err := ParseSize(in); err == nil {
			t.Errorf("ParseSize(%q) accepted", in)
		}
	}
}

func TestSizeString(t *testing.T) {
	for s, want := range map[Size]string{0: "0", 1023: "1023", 1024: "1KiB", 3 << 20: "3MiB", 8 << 30: "8GiB", 1536: "1536"} {
		if got := s.String(); got != want {
			t.Errorf("%d.String() = %q, want %q", int64(s), got, want)
		}
	}
}

func FuzzParseSize(f *testing.F) {
	for _, s := range []string{"0", "8GiB", "64MiB", "1KiB", "-1", "1.5GiB", "99999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseSize(s)
		if err != nil {
			return
		}
		if v < 0 {
			t.Fatalf("negative size %d from %q", v, s)
		}
		back, err := ParseSize(v.String())
		if err != nil || back != v {
			t.Fatalf("round trip of %q: %d → %q → %d, %v", s, v, v.String(), back, err)
		}
	})
}

type section struct {
	Listen string        `koanf:"listen" help:"where"`
	Token  string        `koanf:"token" secret:"true"`
	Wait   time.Duration `koanf:"wait"`
	Max    Size          `koanf:"max"`
	Peers  []string      `koanf:"peers"`
	On     bool          `koanf:"on"`
}

type root struct {
	Name string  `koanf:"name"`
	Sec  section `koanf:"sec"`
}

func defaults() *root {
	return &root{Name: "n", Sec: section{Listen: "a:1", Wait: time.Second, Max: 1 << 20}}
}

func TestLoadFlagsAndEnv(t *testing.T) {
	cfg := defaults()
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	RegisterFlags(fs, cfg)
	if err := fs.Parse([]string{"--sec.wait=2s", "--sec.on", "--sec.peers=x,y"}); err != nil {
		t.Fatal(err)
	}
	env := []string{"RON_SEC__MAX=2MiB", "RON_NAME=m", "PATH=/bin", "RON_TOKEN=not-a-key"}
	if err := Load(cfg, Sources{Environ: env, Flags: fs}); err != nil {
		t.Fatal(err)
	}
	if cfg.Sec.Wait != 2*time.Second || !cfg.Sec.On || cfg.Sec.Max != 2<<20 || cfg.Name != "m" ||
		strings.Join(cfg.Sec.Peers, ",") != "x,y" || cfg.Sec.Listen != "a:1" {
		t.Fatalf("unexpected config %+v", cfg)
	}
}

func TestLoadRejectsUnknownEnv(t *testing.T) {
	err := Load(defaults(), Sources{Environ: []string{"RON_SEC__LISTN=x"}})
	if err == nil || !strings.Contains(err.Error(), "listn") {
		t.Fatalf("got %v", err)
	}
}

func TestTOMLRedactsSecrets(t *testing.T) {
	cfg := defaults()
	cfg.Sec.Token = "s3cret"
	out := TOML(cfg, true)
	if strings.Contains(out, "s3cret") || !strings.Contains(out, `token = "<redacted>"`) {
		t.Fatalf("secret not redacted:\n%s", out)
	}
	if !strings.Contains(TOML(cfg, false), "s3cret") {
		t.Fatal("unredacted output must show the value")
	}
	if !strings.Contains(out, "[sec]\n# where\nlisten = \"a:1\"") {
		t.Fatalf("unexpected layout:\n%s", out)
	}
}

func TestFlagNames(t *testing.T) {
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	RegisterFlags(fs, defaults(), "name")
	for _, name := range []string{"sec.listen", "sec.token", "sec.wait", "sec.max", "sec.peers", "sec.on"} {
		if fs.Lookup(name) == nil {
			t.Errorf("flag --%s missing", name)
		}
	}
	if fs.Lookup("name") != nil {
		t.Error("skipped key registered")
	}
	if got := fs.Lookup("sec.token").DefValue; got != "" {
		t.Errorf("secret default shown in help: %q", got)
	}
}

func TestChanged(t *testing.T) {
	type section struct {
		Listen string        `koanf:"listen"`
		Peers  []string      `koanf:"peers"`
		Wait   time.Duration `koanf:"wait"`
	}
	a := section{Listen: "a:1", Peers: []string{"x"}, Wait: time.Second}
	b := a
	b.Peers = []string{"x", "y"}
	if got := Changed("s", &a, &b, "listen", "wait"); len(got) != 0 {
		t.Fatalf("unchanged keys reported: %v", got)
	}
	b.Listen = "a:2"
	if got := Changed("s", &a, &b, "listen", "peers", "wait"); !reflect.DeepEqual(got, []string{"s.listen", "s.peers"}) {
		t.Fatalf("changed %v", got)
	}
	defer func() {
		if recover() == nil {
			t.Fatal("an unknown key must panic")
		}
	}()
	Changed("s", &a, &b, "nope")
}
