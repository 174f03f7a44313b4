package node

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/ronhq/ron/runtime/config"
)

// TestExampleCoversEveryDefault loads config.example.toml and checks it
// names every key and that its values are exactly the built-in defaults.
func TestExampleCoversEveryDefault(t *testing.T) {
	raw, err := os.ReadFile("../../config.example.toml")
	if err != nil {
		t.Fatal(err)
	}
	def := DefaultConfig()
	for _, f := range config.Fields(&def) {
		_, name := splitKeyForTest(f.Key)
		if !strings.Contains(string(raw), "\n"+name+" = ") {
			t.Errorf("config.example.toml lacks key %s", f.Key)
		}
	}
	got, err := LoadConfig(config.Sources{File: "../../config.example.toml"})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(*got, def) {
		t.Errorf("example differs from defaults:\n%+v\n%+v", *got, def)
	}
	if !strings.HasSuffix(string(raw), "\n"+config.TOML(&def, false)) {
		t.Error("config.example.toml is stale: regenerate it from config.TOML(DefaultConfig())")
	}
}

func splitKeyForTest(key string) (string, string) {
	i := strings.LastIndexByte(key, '.')
	return key[:max(i, 0)], key[i+1:]
}

func TestPrecedence(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "ron.toml")
	toml := "[storage]\nqueue_timeout = \"2s\"\nget_workers = 8\nput_workers = 4\n"
	if err := os.WriteFile(file, []byte(toml), 0o600); err != nil {
		t.Fatal(err)
	}
	fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
	defaults := DefaultConfig()
	config.RegisterFlags(fs, &defaults)
	if err := fs.Parse([]string{"--storage.put-workers=2", "--amnesia"}); err != nil {
		t.Fatal(err)
	}
	env := []string{"RON_STORAGE__GET_WORKERS=7", "RON_STORAGE__PUT_WORKERS=3", "RON_DATA_DIR=/tmp/x", "RON_TOKEN=abc", "RON_CONFIG=ignored"}
	cfg, err := LoadConfig(config.Sources{File: file, Environ: env, Flags: fs})
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"file over default", cfg.Storage.QueueTimeout, 2 * time.Second},
		{"env over file", cfg.Storage.GetWorkers, 7},
		{"flag over env", cfg.Storage.PutWorkers, 2},
		{"top-level env", cfg.DataDir, "/tmp/x"},
		{"bool flag", cfg.Amnesia, true},
		{"unset flag keeps default", cfg.Storage.QueueCapacity, 512},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s: got %v, want %v", c.name, c.got, c.want)
		}
	}
}

func TestBadConfig(t *testing.T) {
	cases := []struct {
		name string
		toml string
		env  []string
		want string
	}{
		{"unknown key in file", "[storage]\nlisen = \"x\"\n", nil, "lisen"},
		{"unknown section", "[nope]\na = 1\n", nil, "nope"},
		{"unknown env key", "", []string{"RON_STORAGE__NOPE=1"}, "nope"},
		{"bad size", "[storage]\nmax_object_bytes = \"8 GB\"\n", nil, "max_object_bytes"},
		{"negative size", "[storage]\nmin_free_bytes = \"-1\"\n", nil, "min_free_bytes"},
		{"bad duration", "drain_deadline = \"soon\"\n", nil, "drain_deadline"},
		{"drain deadline above max", "drain_deadline = \"6s\"\n", nil, "drain_deadline"},
		{"edge storage url while storage is co-located", "[edge]\nstorage_url = \"http://10.0.0.2:5303\"\n", nil, "one source of truth"},
		{"edge index url while the index is co-located", "[edge]\nindex_url = \"http://10.0.0.2:5304\"\n", nil, "edge.index_url"},
		{"edge bad verify_packs", "[edge]\nverify_packs = \"paranoid\"\n", nil, "edge.verify_packs"},
		{"edge bad listen", "[edge]\nlisten = \"nohost\"\n", nil, "edge.listen"},
		{"edge origin unknown key", "[[edge.origins]]\nname = \"o\"\nurl = \"https://o.example\"\nttl = 1\n", nil, "ttl"},
		{"edge origin bad name", "[[edge.origins]]\nname = \"O!\"\nurl = \"https://o.example\"\n", nil, "edge.origins"},
		{"gateway without upstream", "roles = [\"gateway\"]\n", nil, "gateway.storage_url"},
		{"gateway url of a co-located role", "[gateway]\nstorage_url = \"http://10.0.0.2:5303\"\n", nil, "one source of truth"},
		{"gateway bad proxy", "[gateway]\ntrusted_proxies = [\"10.0.0.0/33\"]\n", nil, "trusted_proxies"},
		{"gateway bad tenant", "[[gateway.tenants]]\nid = \"anon:x\"\n", nil, "gateway.tenants"},
		{"gateway tenant unknown key", "[[gateway.tenants]]\nid = \"a\"\nrate = 1\n", nil, "rate"},
		{"unknown role", "roles = [\"cache\"]\n", nil, "unknown role"},
		{"duplicate role", "roles = [\"storage\", \"storage\"]\n", nil, "twice"},
		{"bad engine", "[storage]\nengine = \"s3\"\n", nil, "engine"},
		{"bad listen", "[storage]\nlisten = \"nohost\"\n", nil, "storage.listen"},
		{"bad log level", "[log]\nlevel = \"loud\"\n", nil, "log.level"},
		{"zero workers", "[storage]\nput_workers = 0\n", nil, "put_workers"},
		{"malformed toml", "[storage\n", nil, "config file"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "ron.toml")
			if err := os.WriteFile(file, []byte(c.toml), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := LoadConfig(config.Sources{File: file, Environ: c.env})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want an error mentioning %q", err, c.want)
			}
		})
	}
}

func TestMissingConfigFile(t *testing.T) {
	if _, err := LoadConfig(config.Sources{File: filepath.Join(t.TempDir(), "absent.toml")}); err == nil {
		t.Fatal("a missing --config file must be an error")
	}
}

func TestRedactedPrint(t *testing.T) {
	def := DefaultConfig()
	out := config.TOML(&def, true)
	for _, want := range []string{"[storage]", `listen = "127.0.0.1:5303"`, `max_object_bytes = "8GiB"`} {
		if !strings.Contains(out, want) {
			t.Errorf("config print lacks %q", want)
		}
	}
}
