package storage

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ronhq/ron/roles/storage/announcing"
	"github.com/ronhq/ron/store"
	"github.com/ronhq/ron/store/fs"
)

// retargetSink is a fakeSink that is also a Retargeter.
type retargetSink struct {
	*fakeSink
	mu      sync.Mutex
	urls    []string
	token   string
	calls   int
	refuse  error // CheckRetarget's answer
	isLocal bool
}

func (s *retargetSink) Target() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.isLocal {
		return "local index"
	}
	return fmt.Sprintf("index_urls (%d)", len(s.urls))
}

func (s *retargetSink) CheckRetarget([]string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.refuse
}

func (s *retargetSink) Retarget(urls []string, token string) error {
	if err := s.CheckRetarget(urls); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.urls, s.token, s.calls = slices.Clone(urls), token, s.calls+1
	return nil
}

func (s *retargetSink) state() ([]string, string, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.urls), s.token, s.calls
}

func TestAnnounceStatus(t *testing.T) {
	for _, tc := range []struct {
		name string
		sink func() announcing.Sink
		off  string
		want string
	}{
		{"plain sink", func() announcing.Sink { return newFakeSink() }, "", "on"},
		{"local index", func() announcing.Sink { return &retargetSink{fakeSink: newFakeSink(), isLocal: true} }, "", "on: local index"},
		{"index urls", func() announcing.Sink { return &retargetSink{fakeSink: newFakeSink()} }, "", "on: index_urls (2)"},
		{"off with reason", func() announcing.Sink { return nil }, "no index role", "off: no index role"},
		{"off without reason", func() announcing.Sink { return nil }, "", "off: no index configured"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := startRoleOpts(t, func(c *Config) { c.IndexURLs = []string{"http://a:5304", "http://b:5304"} },
				func(o *Options) { o.Sink, o.AnnounceOff = tc.sink(), tc.off })
			if got := tr.Details().(map[string]any)["announce"]; got != tc.want {
				t.Fatalf("announce = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestApplyRetargets: Start points the sink at the configured index_urls
// and index_token; a reload moves it; a reload the sink refuses changes
// nothing.
func TestApplyRetargets(t *testing.T) {
	sink := &retargetSink{fakeSink: newFakeSink()}
	tr := startRoleOpts(t, func(c *Config) { c.IndexURLs, c.IndexToken = []string{"http://a:5304"}, "t1" },
		func(o *Options) { o.Sink = sink })
	if urls, tok, n := sink.state(); !slices.Equal(urls, []string{"http://a:5304"}) || tok != "t1" || n != 1 {
		t.Fatalf("after Start: %v %q %d", urls, tok, n)
	}
	cfg := *tr.Cfg.Load()
	cfg.IndexURLs, cfg.IndexToken, cfg.ProviderTTL = []string{"https://b", "http://c:1/idx"}, "", 2*time.Minute
	if err := tr.Apply(cfg); err != nil {
		t.Fatal(err)
	}
	if urls, tok, _ := sink.state(); len(urls) != 2 || tok != "" {
		t.Fatalf("after reload: %v %q", urls, tok)
	}
	sink.mu.Lock()
	sink.refuse = errors.New("no local index and no index_urls")
	sink.mu.Unlock()
	bad := cfg
	bad.IndexURLs = nil
	if err := tr.Apply(bad); err == nil || !strings.Contains(err.Error(), "storage.index_urls") {
		t.Fatalf("refused retarget: %v", err)
	}
	if err := tr.CheckApply(bad); err == nil {
		t.Fatal("CheckApply accepted what Apply refuses")
	}
	if got := tr.Cfg.Load(); len(got.IndexURLs) != 2 {
		t.Fatalf("refused reload applied: %v", got.IndexURLs)
	}
	id := tr.put([]byte("hello world"), "text/plain")
	recs := sink.wait(t, func(r []announcing.Record) bool { return len(r) > 0 })
	if recs[0] != (announcing.Record{ID: mustID(t, id), Type: "text/plain", TTL: 2 * time.Minute}) {
		t.Fatalf("PUT after provider_ttl reload announced %v", recs[0])
	}
}

func TestApplyRejects(t *testing.T) {
	tr := startRoleOpts(t, nil, func(o *Options) { o.Sink, o.AnnounceOff = nil, "no index" })
	for _, tc := range []struct {
		name string
		mod  func(*Config)
		want string
	}{
		{"turning announcing on", func(c *Config) { c.IndexURLs = []string{"http://a:5304"} }, "restart"},
		{"bad url", func(c *Config) { c.IndexURLs = []string{"ftp://a"} }, "storage.index_urls"},
		{"ttl too long", func(c *Config) { c.ProviderTTL = 86401 * time.Second }, "storage.provider_ttl"},
		{"restart-only key", func(c *Config) { c.Engine = "memory" }, "storage.engine"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := *tr.Cfg.Load()
			tc.mod(&cfg)
			if err := tr.Apply(cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Apply = %v, want %q", err, tc.want)
			}
		})
	}
	cfg := *tr.Cfg.Load()
	cfg.IndexToken = "secret" // no URLs: nothing to turn on
	if err := tr.Apply(cfg); err != nil {
		t.Fatal(err)
	}
}

func TestConfigValidateAnnounce(t *testing.T) {
	for _, tc := range []struct {
		name string
		mod  func(*Config)
		want string // "" = valid
	}{
		{"defaults", func(*Config) {}, ""},
		{"http and https", func(c *Config) { c.IndexURLs = []string{"http://a:5304", "https://b/path/"} }, ""},
		{"ipv6", func(c *Config) { c.IndexURLs = []string{"http://[::1]:5304"} }, ""},
		{"ttl 1s", func(c *Config) { c.ProviderTTL = time.Second }, ""},
		{"ttl 86400s", func(c *Config) { c.ProviderTTL = announcing.MaxProviderTTL }, ""},
		{"ttl zero", func(c *Config) { c.ProviderTTL = 0 }, "provider_ttl"},
		{"ttl under 1s", func(c *Config) { c.ProviderTTL = 999 * time.Millisecond }, "provider_ttl"},
		{"ttl over a day", func(c *Config) { c.ProviderTTL = announcing.MaxProviderTTL + time.Second }, "provider_ttl"},
		{"relative", func(c *Config) { c.IndexURLs = []string{"/providers"} }, "scheme"},
		{"host only", func(c *Config) { c.IndexURLs = []string{"a:5304"} }, "scheme"},
		{"ftp", func(c *Config) { c.IndexURLs = []string{"ftp://a"} }, "scheme"},
		{"empty", func(c *Config) { c.IndexURLs = []string{""} }, "scheme"},
		{"no host", func(c *Config) { c.IndexURLs = []string{"http://"} }, "host"},
		{"port only", func(c *Config) { c.IndexURLs = []string{"http://:5304"} }, "host"},
		{"userinfo", func(c *Config) { c.IndexURLs = []string{"http://u:p@a"} }, "userinfo"},
		{"user only", func(c *Config) { c.IndexURLs = []string{"http://u@a"} }, "userinfo"},
		{"query", func(c *Config) { c.IndexURLs = []string{"http://a/?x=1"} }, "query"},
		{"empty query", func(c *Config) { c.IndexURLs = []string{"http://a/?"} }, "query"},
		{"fragment", func(c *Config) { c.IndexURLs = []string{"http://a/#top"} }, "fragment"},
		{"empty fragment", func(c *Config) { c.IndexURLs = []string{"http://a/#"} }, "fragment"},
		{"bad escape", func(c *Config) { c.IndexURLs = []string{"http://a/%zz"} }, "not a URL"},
		{"space", func(c *Config) { c.IndexURLs = []string{" http://a"} }, "not a URL"},
		{"duplicate", func(c *Config) { c.IndexURLs = []string{"http://a", "http://a"} }, "twice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := DefaultConfig()
			tc.mod(&c)
			err := c.Validate()
			if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
				t.Fatalf("Validate = %v, want %q", err, tc.want)
			}
		})
	}
}

// TestRoleReprovidesAtStart: the "reprovide" worker's first pass, right
// after start, announces what the store already held, with its type.
func TestRoleReprovidesAtStart(t *testing.T) {
	dir := t.TempDir()
	st, err := fs.Open(filepath.Join(dir, "storage"), fs.Options{MinFreeBytes: 1})
	if err != nil {
		t.Fatal(err)
	}
	info, _, err := st.Put(context.Background(), bytes.NewReader([]byte("hello world")),
		store.PutOptions{Meta: store.Meta{ContentType: "text/plain"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	tr := startRoleOpts(t, func(c *Config) { c.MinFreeBytes = 1 }, func(o *Options) { o.DataDir = dir })
	want := announcing.Record{ID: info.ID, Type: "text/plain", TTL: 600 * time.Second}
	tr.sink.wait(t, func(r []announcing.Record) bool { return slices.Contains(r, want) })
	if got := tr.metric(series("tasks_spawned_total", "kind", "reprovide")); got != 1 {
		t.Fatalf("reprovide passes %v", got)
	}
}
