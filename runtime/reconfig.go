package runtime

import (
	"fmt"
	"sync"
)

// Reconfig is the hot-reload sequence roles share (Applier and
// ApplyChecker): Check takes a candidate config apart from the one in
// force; Apply checks it, stores it, and reconfigures the running role. A
// role builds one over its own config snapshot and Apply lock (it is cheap
// to build per call) and keeps its own checks and error texts in the hooks.
type Reconfig[T any] struct {
	// Role names the role in the error for a config of another type
	// ("gateway: Apply got string").
	Role string
	// Config holds the config in force; Apply stores the new one there.
	Config *Snapshot[T]
	// Lock serialises Apply (the role's apply mutex, which its Start or
	// Stop may also hold). Check does not take it.
	Lock sync.Locker
	// Validate checks a candidate on its own; nil: nothing.
	Validate func(n T) error
	// RestartOnly lists the keys n changes from cur that need a restart;
	// any makes the error "these keys need a restart: [k …]". nil: none.
	RestartOnly func(cur, n T) []string
	// Refuse returns why n cannot be applied over cur besides
	// RestartOnly keys (forbidden keys, targets the role cannot take);
	// nil: nothing else is refused.
	Refuse func(cur, n T) error
	// Running reports, under Lock, whether the role runs and so must be
	// reconfigured; nil: always call Reconfigure.
	Running func() bool
	// Reconfigure applies n (already stored) to the running role, under
	// Lock; old is the config it replaced. nil: storing is all there is.
	Reconfigure func(old, n T) error
}

// Check returns cfg as a T when Apply would accept it, changing nothing:
// it must be a T, pass Validate, change no RestartOnly key and pass Refuse,
// in that order (the first failure is returned).
func (rc *Reconfig[T]) Check(cfg any) (T, error) {
	n, ok := cfg.(T)
	if !ok {
		return n, fmt.Errorf("%s: Apply got %T", rc.Role, cfg)
	}
	if rc.Validate != nil {
		if err := rc.Validate(n); err != nil {
			return n, err
		}
	}
	cur := *rc.Config.Load()
	if rc.RestartOnly != nil {
		if err := NeedRestart(rc.RestartOnly(cur, n)); err != nil {
			return n, err
		}
	}
	if rc.Refuse != nil {
		if err := rc.Refuse(cur, n); err != nil {
			return n, err
		}
	}
	return n, nil
}

// Apply checks cfg (Check); then, under Lock, stores it and, when the role
// is Running, calls Reconfigure with the config it replaced. A role that has
// not started reads the stored config when it starts.
func (rc *Reconfig[T]) Apply(cfg any) error {
	n, err := rc.Check(cfg)
	if err != nil {
		return err
	}
	rc.Lock.Lock()
	defer rc.Lock.Unlock()
	old := *rc.Config.Load()
	rc.Config.Store(&n)
	if rc.Reconfigure == nil || rc.Running != nil && !rc.Running() {
		return nil
	}
	return rc.Reconfigure(old, n)
}

// NeedRestart is the error naming keys a reload cannot change live, nil
// when there are none.
func NeedRestart(keys []string) error {
	if len(keys) == 0 {
		return nil
	}
	return fmt.Errorf("these keys need a restart: %v", keys)
}
