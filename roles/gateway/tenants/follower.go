package tenants

import (
	"errors"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/rs/zerolog"

	"github.com/ronhq/ron/roles/registry/registryapi"
	"github.com/ronhq/ron/runtime"
)

// FollowerOptions configure NewFollower.
type FollowerOptions struct {
	// Client reads the registry (httpapi.LocalClient when it is co-located,
	// registryapi.HTTPClient over registry_url otherwise). Nil: no registry; the
	// table is config only and Run returns at once.
	Client registryapi.Client
	// Bus, when set, replaces Client.Watch as the source of new versions
	// with the RegistryUpdated events of the co-located registry
	// (docs/gateway.md §7); Head and Get still go through Client.
	Bus *runtime.Bus
	// Defaults and Config are the tenant_* / anon_* defaults and the
	// [[gateway.tenants]] items; SetConfig replaces both.
	Defaults Defaults
	Config   []Item
	// Apply receives every new Table, in order, the first one from
	// NewFollower; it must swap it in and return at once, and must not
	// call SetConfig. Nil discards tables (Table still returns the last).
	Apply func(*Table)
	// Metrics receives the follower's metrics (role="gateway"); nil keeps
	// them private.
	Metrics *runtime.Metrics
	// Log (the role's logger) receives tenant set changes, skipped items
	// and registry errors.
	Log zerolog.Logger
}

// Follower keeps a Table current from config and a registry (docs/gateway.md
// §7). Its Run is the one goroutine that talks to the registry; SetConfig
// may be called from any goroutine.
type Follower struct {
	client registryapi.Client
	bus    *runtime.Bus
	apply  func(*Table)
	log    zerolog.Logger
	met    meters
	rnd    func() float64 // backoff jitter source; nil = math/rand

	table atomic.Pointer[Table]

	mu      sync.Mutex // serialises building and applying tables; guards the fields below
	d       Defaults
	config  []Item
	reg     []Item // items of the applied registry version
	version uint64
	applied bool // a registry version was applied
}

// NewFollower builds the config-only table, hands it to opt.Apply, and
// returns a follower ready to Run. Invalid config items are logged and
// counted (ron_gateway_tenant_items_invalid_total) and skipped.
func NewFollower(opt FollowerOptions) *Follower {
	if opt.Apply == nil {
		opt.Apply = func(*Table) {}
	}
	f := &Follower{client: opt.Client, bus: opt.Bus, apply: opt.Apply,
		log: opt.Log.With().Str("task", "tenants").Logger(), met: newMeters(opt.Metrics)}
	f.SetConfig(opt.Defaults, opt.Config)
	return f
}

// Table returns the table in force (the last one handed to Apply).
func (f *Follower) Table() *Table { return f.table.Load() }

// SetConfig replaces the defaults and the config items (a live reload) and
// applies the table they make with the last applied registry items; invalid
// config items are logged, counted and skipped.
func (f *Follower) SetConfig(d Defaults, config []Item) {
	f.mu.Lock()
	f.d, f.config = d, slices.Clone(config)
	errs := f.rebuildLocked()
	f.mu.Unlock()
	f.skipped(errs, SourceConfig)
}

// install applies registry version v with its tenant items (setErrs: the
// items ItemsFromSet skipped) unless a version at or above v was applied
// already.
func (f *Follower) install(v uint64, items []Item, setErrs []error) {
	f.mu.Lock()
	if f.applied && v <= f.version {
		f.mu.Unlock()
		return
	}
	f.reg, f.version, f.applied = items, v, true
	errs := f.rebuildLocked()
	f.mu.Unlock()
	f.met.version.Set(float64(v))
	f.skipped(append(setErrs, errs...), SourceRegistry)
	f.log.Debug().Uint64("version", v).Int("tenants", len(items)).Msg("registry tenant set applied")
}

// rebuildLocked builds and applies the table of the current state; f.mu
// must be held. It returns the build's item errors.
func (f *Follower) rebuildLocked() []error {
	t, errs := Build(f.d, f.config, f.reg)
	t.version, t.registry = f.version, f.applied
	f.table.Store(t)
	f.apply(t)
	return errs
}

// skipped logs and counts the item errors of source.
func (f *Follower) skipped(errs []error, source string) {
	for _, err := range errs {
		var ie *ItemError
		if errors.As(err, &ie) && ie.Source != source {
			continue
		}
		f.met.invalid.Inc()
		f.log.Warn().Err(err).Str("source", source).Msg("tenant item skipped")
	}
}

// last returns the applied registry version and whether there is one.
func (f *Follower) last() (uint64, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.version, f.applied
}
