package cluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/hashicorp/memberlist"
)

// Stop's waits for its broadcasts: the leaving announcement, then
// memberlist's leave (1 s, docs/cluster.md §2). Both usually end within a
// few gossip intervals.
const (
	announceTimeout = 500 * time.Millisecond
	leaveTimeout    = time.Second
)

// Start binds gossip (TCP and UDP on cluster.listen) and tries every join
// address once; a failed join is logged, not an error (Run keeps trying).
// It fails when the address cannot be bound or resolved, when called
// twice, or after Stop.
func (c *Cluster) Start(ctx context.Context) error {
	c.mu.Lock()
	switch c.state {
	case stateStopped:
		c.mu.Unlock()
		return errStopped
	case stateNew:
	default:
		c.mu.Unlock()
		return errors.New("cluster: already started")
	}
	c.state = stateStarting
	c.mu.Unlock()

	ml, conf, err := c.create(ctx)
	var self string
	if err == nil {
		// Read before ml is shared: memberlist updates its local node in
		// place under its own lock (UpdateNode).
		self = gossipAddr(ml.LocalNode())
	}
	c.mu.Lock()
	if err == nil && c.state == stateStopped {
		_ = ml.Shutdown() // Stop ran meanwhile: it found nothing to shut down
		err = errStopped
	}
	if err != nil {
		if c.state == stateStarting {
			c.state = stateNew
		}
		c.mu.Unlock()
		return err
	}
	c.ml, c.state = ml, stateStarted
	c.selfAddr, c.rejoinEvery, c.rejoinTimeout = self, reconnectInterval(conf), conf.TCPTimeout
	c.mu.Unlock()

	c.log.Info().Str("node_id", c.id).Str("gossip", self).Msg("gossip started")
	if len(c.opt.Config.Join) == 0 {
		c.joined.Store(true)
		return nil
	}
	c.tryJoin(ctx, ml)
	return nil
}

// create builds and binds the memberlist instance; it also returns the
// config it was built from (memberlist keeps using it: read only).
func (c *Cluster) create(ctx context.Context) (*memberlist.Memberlist, *memberlist.Config, error) {
	conf, err := c.memberlistConfig(ctx)
	if err != nil {
		return nil, nil, err
	}
	ml, err := memberlist.Create(conf)
	if err != nil {
		return nil, nil, fmt.Errorf("cluster: gossip on %s: %w", c.opt.Config.Listen, err)
	}
	return ml, conf, nil
}

// localPushPull is the full state exchange period of the local profile.
const localPushPull = 3 * time.Second

// memberlistConfig maps the [cluster] section onto memberlist's config.
func (c *Cluster) memberlistConfig(ctx context.Context) (*memberlist.Config, error) {
	cfg := c.opt.Config
	conf := memberlist.DefaultLANConfig()
	if cfg.Profile == ProfileLocal {
		conf = memberlist.DefaultLocalConfig()
		// On one machine a full state exchange costs nothing, and a member
		// whose few join gossips were lost under load otherwise waits up to
		// 15 s for the next one.
		conf.PushPullInterval = localPushPull
	}
	bindIP, bindPort, err := resolveHostPort(ctx, cfg.Listen)
	if err != nil {
		return nil, fmt.Errorf("cluster.listen: %w", err)
	}
	conf.Name = c.id
	conf.BindAddr, conf.BindPort = bindIP, bindPort
	conf.AdvertiseAddr, conf.AdvertisePort = "", bindPort
	if cfg.Advertise != "" {
		if conf.AdvertiseAddr, conf.AdvertisePort, err = resolveHostPort(ctx, cfg.Advertise); err != nil {
			return nil, fmt.Errorf("cluster.advertise: %w", err)
		}
	}
	conf.SecretKey = c.opt.Key
	conf.Logger = memberlistLogger(c.opt.Log)
	d := delegate{c: c}
	conf.Delegate, conf.Events, conf.Conflict = d, d, d
	if c.opt.tune != nil {
		c.opt.tune(conf)
	}
	return conf, nil
}

// resolveHostPort returns addr's IP (resolving a host name; an empty host
// is 0.0.0.0) and port.
func resolveHostPort(ctx context.Context, addr string) (string, int, error) {
	host, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, err
	}
	port, err := strconv.Atoi(portStr)
	if err != nil {
		return "", 0, fmt.Errorf("%q has an invalid port", addr)
	}
	switch {
	case host == "":
		return "0.0.0.0", port, nil
	case net.ParseIP(host) != nil:
		return host, port, nil
	}
	ips, err := net.DefaultResolver.LookupIPAddr(ctx, host)
	if err != nil {
		return "", 0, err
	}
	if len(ips) == 0 {
		return "", 0, fmt.Errorf("%q resolves to no address", host)
	}
	return ips[0].IP.String(), port, nil
}

// Stop leaves the cluster (announcing the departure, at most 0.5 s, then
// memberlist's Leave, at most 1 s), shuts gossip down, ends Run and waits
// until Run has returned or ctx ends. Call it after the roles have
// drained. It is idempotent; after it Start fails and Run returns nil at
// once. memberlist's own goroutines end shortly after (within a probe
// interval): its Shutdown does not wait for a probe in flight.
func (c *Cluster) Stop(ctx context.Context) { c.stop(ctx, true) }

// stop is Stop; leave = false skips the goodbye (tests: a crash).
func (c *Cluster) stop(ctx context.Context, leave bool) {
	c.stopOnce.Do(func() {
		c.mu.Lock()
		ml := c.ml
		c.state = stateStopped
		c.mu.Unlock()
		if ml != nil {
			c.shutdown(ml, leave)
		}
		c.stopCancel()
	})
	c.mu.Lock()
	done := c.runDone
	c.mu.Unlock()
	if done == nil {
		return
	}
	select {
	case <-done:
	case <-ctx.Done():
		c.log.Warn().Msg("cluster owner still running after stop deadline")
	}
}

// shutdown says goodbye (when leave) and stops memberlist. The goodbye is
// a metadata update announcing the departure (others mark the node left on
// it; memberlist's leave itself does not tell them) and then memberlist's
// Leave, each waiting a bounded time for its broadcast.
func (c *Cluster) shutdown(ml *memberlist.Memberlist, leave bool) {
	if leave {
		c.leaving.Store(true)
		if c.local.Load().leaving != nil {
			if err := ml.UpdateNode(announceTimeout); err != nil {
				c.log.Debug().Err(err).Msg("leaving announcement not broadcast in time")
			}
		}
		if err := ml.Leave(leaveTimeout); err != nil {
			c.log.Warn().Err(err).Msg("leave not broadcast; others will see this node dead")
		}
	}
	if err := ml.Shutdown(); err != nil {
		c.log.Warn().Err(err).Msg("gossip shutdown")
	}
	c.log.Info().Bool("left", leave).Msg("gossip stopped")
}
