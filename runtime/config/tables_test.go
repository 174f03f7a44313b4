package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

type row struct {
	ID    string   `koanf:"id"`
	Rate  *float64 `koanf:"rate"`
	Limit int64    `koanf:"limit"`
}

type withTables struct {
	S struct {
		Rows []row `koanf:"rows"`
	} `koanf:"s"`
}

// A list of structs is an array of tables: the file sets it, TOML prints it
// as inline tables (nil pointers left out) that load back to the same value,
// and it gets no flag.
func TestTableListsRoundTrip(t *testing.T) {
	var cfg withTables
	cfg.S.Rows = []row{}
	file := filepath.Join(t.TempDir(), "c.toml")
	text := "[[s.rows]]\nid = \"a\"\nrate = 2.5\n\n[[s.rows]]\nid = \"b\"\nlimit = 7\n"
	if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Load(&cfg, Sources{File: file}); err != nil {
		t.Fatal(err)
	}
	if len(cfg.S.Rows) != 2 || cfg.S.Rows[0].ID != "a" || *cfg.S.Rows[0].Rate != 2.5 || cfg.S.Rows[1].Rate != nil || cfg.S.Rows[1].Limit != 7 {
		t.Fatalf("loaded %+v", cfg.S.Rows)
	}
	printed := TOML(&cfg, false)
	want := `rows = [{id = "a", rate = 2.5, limit = 0}, {id = "b", limit = 7}]`
	if !strings.Contains(printed, want) {
		t.Fatalf("TOML:\n%s\nwant a line %s", printed, want)
	}
	if err := os.WriteFile(file, []byte(printed), 0o600); err != nil {
		t.Fatal(err)
	}
	var back withTables
	back.S.Rows = []row{}
	if err := Load(&back, Sources{File: file}); err != nil || !Equal(back, cfg) {
		t.Fatalf("reloaded %+v, %v; want %+v", back.S.Rows, err, cfg.S.Rows)
	}
	fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
	RegisterFlags(fs, &cfg)
	if fs.Lookup("s.rows") != nil {
		t.Fatal("a table list got a flag")
	}
}

func TestTableListsRejectUnknownKeys(t *testing.T) {
	var cfg withTables
	file := filepath.Join(t.TempDir(), "c.toml")
	if err := os.WriteFile(file, []byte("[[s.rows]]\nid = \"a\"\nbogus = 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Load(&cfg, Sources{File: file}); err == nil || !strings.Contains(err.Error(), "bogus") {
		t.Fatalf("err = %v, want one naming bogus", err)
	}
}
