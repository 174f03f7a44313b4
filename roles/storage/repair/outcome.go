package repair

import (
	"context"
	"errors"
	"fmt"
)

// Failure is an Executor error with the reason it is counted under.
type Failure struct {
	Reason string
	Err    error
}

// Error is "reason: cause".
func (f *Failure) Error() string { return fmt.Sprintf("%s: %v", f.Reason, f.Err) }

// Unwrap returns the cause.
func (f *Failure) Unwrap() error { return f.Err }

// Fail wraps err with reason.
func Fail(reason string, err error) error { return &Failure{Reason: reason, Err: err} }

// Outcome reasons the engine itself uses.
const (
	ReasonCopied     = "copied"      // ok: bytes moved
	ReasonExisting   = "existing"    // ok: the target already held it
	ReasonTargetGone = "target_gone" // the target left the membership or has no storage URL
	ReasonCanceled   = "canceled"    // the role is stopping
	ReasonError      = "error"       // any other failure
)

// ReasonOf returns the reason err is counted under.
func ReasonOf(err error) string {
	var f *Failure
	switch {
	case errors.As(err, &f):
		return f.Reason
	case errors.Is(err, context.Canceled):
		return ReasonCanceled
	}
	return ReasonError
}
