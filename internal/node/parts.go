package node

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/ronhq/ron/runtime"
	"github.com/ronhq/ron/runtime/module"
	"github.com/ronhq/ron/runtime/sdnotify"
)

// The node's own parts: modules of the node itself, run by the Manager in
// the module graph beside the roles (docs/architecture.md §3).
const (
	partSDNotify      = "sdnotify"       // systemd notifications; first up, last down
	partAdmin         = "admin"          // the admin plane
	partMembership    = "membership"     // cluster mode: gossip bound and joined before the roles, left after them
	partMembershipRun = "membership-run" // cluster mode, after the roles: the table, the member allow list, bound addresses
	partControlPlane  = "control-plane"  // cluster mode, after the roles that keep replicated state: the Raft member
	partReadiness     = "readiness"      // after everything: READY=1 and the readiness gauges
)

// partStopSlack is added to a part's own shutdown bound: the Manager's
// bound must not cut short the part's.
const partStopSlack = 250 * time.Millisecond

// part is a node part as the Manager runs it: each phase is optional.
type part struct {
	name  string
	start func(ctx context.Context) error
	run   func(ctx context.Context) error
	stop  func()
	bound time.Duration // how long stop may take
}

// Name implements runtime.Role.
func (p *part) Name() string { return p.name }

// Start implements runtime.Role.
func (p *part) Start(ctx context.Context) error {
	if p.start == nil {
		return nil
	}
	return p.start(ctx)
}

// Run implements runtime.Role.
func (p *part) Run(ctx context.Context) error {
	if p.run == nil {
		return nil
	}
	return p.run(ctx)
}

// Stop implements runtime.Role: the part's stop bounds itself.
func (p *part) Stop(context.Context) error {
	if p.stop != nil {
		p.stop()
	}
	return nil
}

// nodeModules lists cfg's modules in list order: the node's parts before
// the roles (systemd notifications, the admin plane, the membership), the
// enabled roles (each also after the admin plane and the membership), and
// the parts after them (the membership's run, readiness). module.Order
// turns it into the start order.
func nodeModules(cfg *Config) []module.Descriptor {
	part := func(name, summary string, requires, uses []string) module.Descriptor {
		return module.Descriptor{Name: name, Kind: module.KindNode, Summary: summary, Requires: requires, Uses: uses}
	}
	mods := []module.Descriptor{
		part(partSDNotify, "systemd notifications (READY, RELOADING, STOPPING, WATCHDOG)", nil, nil),
		part(partAdmin, "the admin plane: status, readiness, metrics, reload, shutdown, tokens", nil, []string{partSDNotify}),
	}
	if cfg.Cluster.Enabled {
		mods = append(mods, part(partMembership, "cluster membership: gossip bound and joined; left at the end",
			[]string{partAdmin}, nil))
	}
	var roles []string
	for _, e := range table {
		if cfg.Enabled(e.Name) {
			d := e.Descriptor
			d.Uses = append(slices.Clone(d.Uses), partAdmin, partMembership)
			mods = append(mods, d)
			roles = append(roles, e.Name)
		}
	}
	if takesPart(cfg) {
		mods = append(mods, part(partControlPlane, "the control-plane Raft member: bootstrap, configuration, the log",
			[]string{partMembership}, roles))
	}
	if cfg.Cluster.Enabled {
		mods = append(mods, part(partMembershipRun, "the membership table, the member allow list, the roles' bound addresses",
			[]string{partMembership}, append(roles, partControlPlane)))
	}
	return append(mods, part(partReadiness, "READY=1 once every module started; the ron_role_ready gauges",
		nil, append([]string{partMembershipRun}, roles...)))
}

// part returns the implementation of the node part name, nil for a role.
func (n *Node) part(name string) *part {
	p := &part{name: name}
	switch name {
	case partSDNotify:
		p.start = func(context.Context) error { n.sd.Start(); return nil }
		p.stop, p.bound = func() { n.sd.Stop() }, sdnotify.StopTimeout
	case partAdmin:
		p.start, p.run = n.startAdmin, n.watchAdmin
		p.stop, p.bound = func() { n.admin.stop() }, adminStopTimeout
	case partMembership:
		p.start = func(ctx context.Context) error { return n.cluster.start(ctx) }
		p.stop, p.bound = func() { n.cluster.stop() }, clusterStopTimeout
	case partControlPlane:
		p.start = n.startControlPlane
		p.stop, p.bound = n.stopControlPlane, controlPlaneStopTimeout
	case partMembershipRun:
		p.start = func(context.Context) error { n.cluster.run(n, n.membershipFailed); return nil }
	case partReadiness:
		p.start = func(context.Context) error { n.sd.CheckReady(); return nil }
		p.run = func(ctx context.Context) error {
			runtime.NewReadinessGauges(n.manager, n.metrics).Run(ctx, runtime.ReadinessRefresh)
			return nil
		}
	default:
		return nil
	}
	return p
}

// startAdmin binds the admin listener and serves it.
func (n *Node) startAdmin(context.Context) error {
	if err := n.admin.start(); err != nil {
		return fmt.Errorf("admin: listen %s: %w", n.cfg.Load().Admin.Listen, err)
	}
	n.adminErr = n.admin.serve()
	return nil
}

// watchAdmin makes a dying admin listener start the shutdown sequence.
func (n *Node) watchAdmin(ctx context.Context) error {
	select {
	case err := <-n.adminErr:
		if err != nil {
			n.log.Error().Err(err).Msg("admin listener failed")
			n.manager.RequestShutdown("admin listener failed")
		}
	case <-ctx.Done():
	}
	return nil
}

// membershipFailed starts the shutdown sequence when the membership table
// fails (not when Stop ended it).
func (n *Node) membershipFailed(err error) {
	if n.manager.Draining() {
		return
	}
	n.log.Error().Err(err).Msg("cluster membership failed")
	n.manager.RequestShutdown("cluster membership failed")
}
