package registry

import (
	"fmt"
	"strings"

	"github.com/ronhq/ron/roles/registry/registryapi"
	"github.com/ronhq/ron/runtime"
	"github.com/ronhq/ron/runtime/config"
)

// CheckApply reports whether Apply would accept cfg: a registry Config
// that validates, with no restart-only key changed. trust_roots and
// trust_roots_b3 are forbidden on reload (reason forbidden_config); the
// other restart-only keys are listen, allow_dev_signer, log_origin, the
// three queue capacities and segment_records. A rejection counts in
// ron_registry_reload_fail_total{reason} and names the keys.
func (r *Role) CheckApply(cfg any) error {
	_, err := r.reconfig().Check(cfg)
	return err
}

// Apply hot-reloads the live keys of docs/registry.md §7: advertise_url, the ingress
// limits, public_reads, read_only (a freeze or unfreeze audit event),
// proposal and tombstone TTLs, max_open_proposals, max_payload_bytes,
// clock_skew, commit_timeout, group_commit_max, checkpoint_max_lag, the
// retention keys, the verifier keys and the stream keys. Any other change
// rejects the whole reload (CheckApply).
func (r *Role) Apply(cfg any) error { return r.reconfig().Apply(cfg) }

// reconfig is the role's reload sequence (runtime.Reconfig).
func (r *Role) reconfig() *runtime.Reconfig[Config] {
	return &runtime.Reconfig[Config]{Role: roleName, Config: r.cfg, Lock: &r.applyMu,
		Validate: r.validate, Refuse: r.checkKeys, Reconfigure: r.reconfigure}
}

// validate checks a candidate config on its own, counting a failure.
func (r *Role) validate(n Config) error {
	if err := n.Validate(); err != nil {
		r.met.reloadFail(reloadInvalid)
		return err
	}
	return nil
}

// checkKeys refuses a reload that changes a forbidden or restart-only key,
// counting the refusal.
func (r *Role) checkKeys(cur, n Config) error {
	if keys := cur.forbidden(n); len(keys) > 0 {
		r.met.reloadFail(reloadForbidden)
		return fmt.Errorf("these keys cannot change on a reload (forbidden_config): %s", strings.Join(keys, ", "))
	}
	if keys := cur.restartOnly(n); len(keys) > 0 {
		r.met.reloadFail(reloadRestart)
		return fmt.Errorf("these keys need a restart: %s", strings.Join(keys, ", "))
	}
	return nil
}

// reconfigure counts the accepted reload and applies n (already stored)
// to the running role: before Start there is nothing else to do (Start
// reads the new config).
func (r *Role) reconfigure(old, n Config) error {
	r.met.reloadOK()
	if !r.running.Load() {
		return nil
	}
	r.server.SetLimits(n.Ingress.Limits())
	if old.ReadOnly != n.ReadOnly {
		r.freeze(n.ReadOnly)
	}
	r.ckpt.notify() // checkpoint_max_lag may have changed
	r.ver.notify()  // verify_full_interval may have changed
	return nil
}

// forbidden lists the trust-roots keys n changes.
func (c Config) forbidden(n Config) []string {
	return config.Changed(registryapi.RoleName, &c, &n, "trust_roots", "trust_roots_b3")
}

// restartOnly lists the other restart-only keys n changes.
func (c Config) restartOnly(n Config) []string {
	return config.Changed(registryapi.RoleName, &c, &n, "listen", "allow_dev_signer", "log_origin",
		"queue_proposals", "queue_approvals", "queue_commits", "segment_records")
}
