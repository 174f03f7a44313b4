package registry

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hashicorp/raft"
	"github.com/labstack/echo/v4"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/httpx/client"
	"github.com/ronhq/ron/roles/registry/committer"
	"github.com/ronhq/ron/roles/registry/registryapi"
	"github.com/ronhq/ron/roles/registry/reglog"
	"github.com/ronhq/ron/roles/registry/regstore"
	"github.com/ronhq/ron/roles/registry/segment"
	"github.com/ronhq/ron/roles/registry/tiles"
	"github.com/ronhq/ron/runtime"
)

// HeaderForwarded marks a registry write relayed by a member that does not
// lead the control plane; its value is that member's node id. A forwarded
// write is never forwarded again.
const HeaderForwarded = "X-Ron-Forwarded"

// Replicated-mode bounds.
const (
	// initPoll is how often registry-init looks whether the log needs its
	// init entry (and whether this member leads).
	initPoll = 250 * time.Millisecond
	// importBatch is how many records of a chain held before the control
	// plane go in one entry.
	importBatch = 256
	// forwardTimeout bounds a write relayed to the leader.
	forwardTimeout = 10 * time.Second
	// maxForwardBody bounds a relayed request body (the payload ceiling
	// with room for the JSON around it).
	maxForwardBody = 1 << 20
)

// reasonImporting is the write-unready reason of the server that brings a
// chain from before the control plane while its import runs: a batch
// between the init entry and the chain's last entry would reach the other
// members before the records it follows.
const reasonImporting = "importing"

// replicated reports whether the registry runs on the control plane
// (cluster mode with a plane; docs/cluster.md §14).
func (r *Role) replicated() bool { return r.opt.Plane != nil && r.opt.Cluster != nil }

// registryMachine is the role's state machine of the registry log as the
// node's plane holds it from New on: it hands every call to the
// reglog.FSM over the role's stores. The node opens the control plane only
// after the role started (the stores are open) and closes it before the
// role stops.
type registryMachine struct{ r *Role }

var _ raft.FSM = registryMachine{}

// fsm is the reglog.FSM; before the stores opened it is a wiring bug.
func (m registryMachine) fsm() *reglog.FSM {
	f := m.r.machine.Load()
	if f == nil {
		panic("registry: the registry log was applied before the registry stores opened")
	}
	return f
}

// Apply implements raft.FSM.
func (m registryMachine) Apply(l *raft.Log) any { return m.fsm().Apply(l) }

// Snapshot implements raft.FSM.
func (m registryMachine) Snapshot() (raft.FSMSnapshot, error) { return m.fsm().Snapshot() }

// Restore implements raft.FSM.
func (m registryMachine) Restore(rc io.ReadCloser) error { return m.fsm().Restore(rc) }

// replicaState is the role's replicated-mode state.
type replicaState struct {
	// migrate: the stores hold a chain from before the control plane and
	// this node bootstraps the cluster alone: registry-init brings it in.
	migrate bool
}

// checkUnlogged refuses a registry that holds versions from before the
// control plane (no meta/log_applied but a log) unless this node is the
// server that bootstraps the cluster alone, whose chain becomes the log's
// initial state.
func (r *Role) checkUnlogged(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, regstore.StoreTimeout)
	defer cancel()
	_, logged, err := reglog.LogApplied(ctx, r.st.RegDB)
	if err != nil {
		return fmt.Errorf("registry: read log_applied: %w", err)
	}
	empty, err := r.st.Empty(ctx)
	if err != nil {
		return fmt.Errorf("registry: read HEAD: %w", err)
	}
	if logged || empty {
		return nil
	}
	cc := r.opt.ClusterConfig
	if !cc.Server || cc.BootstrapExpect != 1 {
		head, _ := committer.DurableHead(ctx, r.st.RegDB)
		return fmt.Errorf("registry: %s holds a chain from before the control plane (HEAD %d); only the server that "+
			"bootstraps the cluster alone brings it in (cluster.server = true, cluster.bootstrap_expect = 1 on this node); "+
			"on any other node move that directory aside so the node takes the cluster's registry (docs/cluster.md §14)",
			r.st.Dir, head)
	}
	if r.st.Log.MinIndex() > 0 {
		return fmt.Errorf("registry: the chain held before the control plane is pruned below %d; only a whole chain can seed the control plane (restore the pruned segments, or start a new registry)", r.st.Log.MinIndex())
	}
	r.repl.migrate = true // writes wait for the import (reasonImporting, set once the committer opened)
	return nil
}

// replicaOptions puts committer options into replicated mode.
func (r *Role) replicaOptions(opt *committer.Options) {
	plane := r.opt.Plane
	opt.Replicate = func(ctx context.Context, fx committer.Effects) error {
		return reglog.Propose(ctx, plane, reglog.Entry{Effects: fx})
	}
	opt.Leading = func() bool { return plane.Freshness().Leader }
	opt.Barrier = plane.Barrier
}

// openMachine builds the state machine over the open stores (Start, after
// the committer and the tree opened).
func (r *Role) openMachine() {
	if r.repl.migrate {
		r.com.SetWriteUnready(reasonImporting, true)
	}
	r.machine.Store(reglog.NewFSM(reglog.Options{Log: r.st.Log, DB: r.st.RegDB, Fatal: r.fatal,
		InstallKey: r.installKey, Key: func() string { return r.tree.Key().SignerKey() },
		Applied: func(n reglog.Notice) { r.com.Notice(n.Token) }}))
}

// fatal stops the node (Env.Fatal), or logs when there is none (tests).
func (r *Role) fatal(err error) {
	r.Log.Error().Err(err).Msg("registry: the stores cannot follow the control-plane log; the node stops")
	if r.opt.Fatal != nil {
		r.opt.Fatal(err)
	}
}

// installKey is the state machine's InstallKey: the log's key becomes this
// member's. A member that signs with another key may take the log's only
// while it holds no record and its tree is empty (a fresh member whose
// own key signed nothing that counts).
func (r *Role) installKey(skey string) error {
	k, err := tiles.ParseLogKey(skey)
	if err != nil {
		return err
	}
	if r.tree.Key().SignerKey() == skey {
		return nil
	}
	if r.tree.Size() != 0 || r.st.Log.Next() != 0 {
		return fmt.Errorf("registry: this member signs with the key of %q (%08x) but the log's is %q (%08x); "+
			"a member whose registry holds records cannot change keys: move its registry directory and %s aside",
			r.tree.Key().Origin(), r.tree.Key().KeyID(), k.Origin(), k.KeyID(), tiles.LogKeyPath(r.opt.DataDir))
	}
	if !r.opt.Amnesia {
		if err := tiles.ReplaceLogKey(r.opt.DataDir, k); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), regstore.StoreTimeout)
	defer cancel()
	return r.tree.Rekey(ctx, k)
}

// initLog is the worker registry-init (replicated mode): while the log has
// no init entry, the leader proposes it every initPoll: the log's origin
// and key (this member's) with genesis (trust roots or the dev signer, as
// docs/registry.md §6), or, on the server that brings a chain from before
// the control plane, that chain: its records in entries of importBatch,
// then its HEAD and proposals. It returns once the log is initialised.
func (r *Role) initLog(ctx context.Context) error {
	for {
		done, err := r.initialised(ctx)
		if err == nil && done {
			return nil
		}
		if err == nil && r.opt.Plane.Freshness().Leader {
			if err = r.proposeInit(ctx); err == nil {
				r.com.SetWriteUnready(reasonImporting, false)
				r.Log.Info().Bool("imported_chain", r.repl.migrate).Msg("registry log initialised on the control plane")
				return nil
			}
		}
		if err != nil {
			r.Log.Debug().Err(err).Msg("registry init: not yet")
		}
		if !runtime.Sleep(ctx, initPoll) {
			return nil
		}
	}
}

// initialised reports whether the stores hold an applied entry.
func (r *Role) initialised(ctx context.Context) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, regstore.StoreTimeout)
	defer cancel()
	_, ok, err := reglog.LogApplied(ctx, r.st.RegDB)
	return ok, err
}

// proposeInit proposes the init entry (and, migrating, the chain).
func (r *Role) proposeInit(ctx context.Context) error {
	key := r.tree.Key()
	init := &reglog.Init{Origin: key.Origin(), Key: key.SignerKey()}
	if !r.repl.migrate {
		plan, err := planGenesis(r.config(), r.spec(r.config()), r.now())
		if err != nil {
			return err
		}
		fx, err := committer.GenesisEffects(plan.genesis)
		if err != nil {
			return err
		}
		return r.propose(ctx, reglog.Entry{Init: init, Effects: fx})
	}
	if err := r.propose(ctx, reglog.Entry{Init: init}); err != nil {
		return err
	}
	var batch []segment.Record
	flush := func() error {
		err := r.propose(ctx, reglog.Entry{Effects: committer.Effects{Records: batch}})
		batch = nil
		return err
	}
	if next := r.st.Log.Next(); next > 0 {
		err := r.st.Log.Scan(0, next-1, func(rec segment.Record) error {
			if batch = append(batch, rec); len(batch) == importBatch {
				return flush()
			}
			return nil
		})
		if err == nil && len(batch) > 0 {
			err = flush()
		}
		if err != nil {
			return fmt.Errorf("registry: import the chain: %w", err)
		}
	}
	sctx, cancel := context.WithTimeout(ctx, regstore.StoreTimeout)
	fx, err := committer.StateEffects(sctx, r.st.RegDB)
	cancel()
	if err != nil {
		return err
	}
	return r.propose(ctx, reglog.Entry{Effects: fx})
}

// propose appends e through the plane, bounded by forwardTimeout.
func (r *Role) propose(ctx context.Context, e reglog.Entry) error {
	ctx, cancel := context.WithTimeout(ctx, forwardTimeout)
	defer cancel()
	return reglog.Propose(ctx, r.opt.Plane, e)
}

// forward is the write routes' first middleware in replicated mode: on the
// leader (or for a write already forwarded once) it calls next; otherwise it
// relays the request, the client's headers included, to the leader's
// registry (its gossiped URL) with X-Ron-Forwarded and hands back the
// answer as it is. When the leader cannot be reached at all (connection
// refused or connect timed out: nothing was sent), it waits for the group
// to elect another leader (at most the election bound) and goes there once,
// as name writes do. Without a leader, when the leader runs no registry, or
// when no leader could be reached, the answer is 503 no_quorum, nothing
// written; a leader that does not answer a request it was sent gives 503
// no_quorum with outcome unknown.
func (r *Role) forward(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		plane := r.opt.Plane
		if plane.Freshness().Leader {
			return next(c)
		}
		req := c.Request()
		if req.Header.Get(HeaderForwarded) != "" {
			return httpx.NoQuorum(httpx.OutcomeNotWritten, "", "leadership moved while the write was forwarded; nothing was written, retry")
		}
		leader, ok := plane.AwaitOtherLeader(req.Context(), "")
		if !ok {
			return httpx.NoQuorum(httpx.OutcomeNotWritten, "", "%s", plane.NoQuorumReason())
		}
		body, err := io.ReadAll(io.LimitReader(req.Body, maxForwardBody+1))
		if err != nil || len(body) > maxForwardBody {
			return httpx.NewError(http.StatusRequestEntityTooLarge, httpx.CodePayloadTooLarge, "request body too large to forward")
		}
		for tries := 0; ; tries++ {
			if leader == r.opt.Node.ID { // elected while this write waited
				req.Body = io.NopCloser(bytes.NewReader(body))
				return next(c)
			}
			m, ok := r.opt.Cluster.View().Member(leader)
			base := m.URL(registryapi.RoleName)
			if !ok || base == "" {
				return httpx.NoQuorum(httpx.OutcomeNotWritten, leader, "the control-plane leader %s does not run the registry: "+
					"every cluster.server = true node must run the registry when any node does (add \"registry\" to its roles)", leader)
			}
			sent, err := r.relay(c, leader, base, body)
			if sent || tries > 0 {
				return err
			}
			if leader, ok = plane.AwaitOtherLeader(req.Context(), leader); !ok {
				return err
			}
		}
	}
}

// relay sends c's request with body to base (the leader's registry) and
// copies the answer back; sent is false when the leader could not be
// reached at all (the error is then 503 no_quorum, not_written).
func (r *Role) relay(c echo.Context, leader, base string, body []byte) (sent bool, err error) {
	req := c.Request()
	ctx, cancel := context.WithTimeout(req.Context(), forwardTimeout)
	defer cancel()
	out, err := http.NewRequestWithContext(ctx, req.Method, base+req.URL.RequestURI(), bytes.NewReader(body))
	if err != nil {
		return true, err
	}
	out.Header = req.Header.Clone()
	out.Header.Set(HeaderForwarded, r.opt.Node.ID)
	resp, err := r.client().Do(out)
	if err != nil {
		if notSent(err) && req.Context().Err() == nil {
			return false, httpx.NoQuorum(httpx.OutcomeNotWritten, leader,
				"the control-plane leader %s could not be reached (%v); nothing was written, retry", leader, err)
		}
		return true, httpx.NoQuorum(httpx.OutcomeUnknown, leader, "the control-plane leader %s did not answer (%v); "+
			"the write's outcome is unknown: retry (propose and commit are idempotent)", leader, err)
	}
	defer resp.Body.Close()
	for k, vs := range resp.Header {
		for _, v := range vs {
			c.Response().Header().Add(k, v)
		}
	}
	c.Response().WriteHeader(resp.StatusCode)
	_, err = io.Copy(c.Response(), io.LimitReader(resp.Body, maxForwardBody))
	return true, err
}

// notSent reports whether a relay's error means no byte of the request
// reached the leader: the connection was never made (refused, no route,
// or the connect timed out).
func notSent(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial" || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.EHOSTUNREACH) || errors.Is(err, syscall.ENETUNREACH)
}

// client is the HTTP client relays use.
func (r *Role) client() *http.Client {
	if c := r.httpClient.Load(); c != nil {
		return c
	}
	c := &http.Client{Timeout: forwardTimeout, CheckRedirect: client.NoRedirects,
		Transport: client.NewTransport(client.TransportOptions{Base: client.BaseBare, DialTimeout: 2 * time.Second,
			MaxIdleConnsPerHost: 16, IdleConnTimeout: 90 * time.Second, DisableCompression: true})}
	r.httpClient.CompareAndSwap(nil, c)
	return r.httpClient.Load()
}

// replicaFields are the Role fields of replicated mode.
type replicaFields struct {
	machine    atomic.Pointer[reglog.FSM]
	repl       replicaState
	httpClient atomic.Pointer[http.Client]
}
