package registry

import (
	"fmt"
	"strings"

	"github.com/ronhq/ron/roles/registry/registryapi"
	"github.com/ronhq/ron/runtime/config"
)

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
	r.Server().SetLimits(n.Ingress.Limits())
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
