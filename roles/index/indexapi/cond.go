package indexapi

import "strconv"

// Cond is a write precondition of SetName and DeleteName (docs/index.md
// §3). The zero Cond is unconditional.
type Cond struct {
	kind    CondKind
	version uint64
}

// CondKind says which precondition a Cond expresses.
type CondKind uint8

// The precondition kinds.
const (
	CondNone    CondKind = iota // unconditional
	CondVersion                 // IfMatch(v)
	CondLive                    // IfLive()
	CondAbsent                  // IfAbsent()
)

// Kind reports which precondition c expresses.
func (c Cond) Kind() CondKind { return c.kind }

// Version is the version an IfMatch condition requires (0 otherwise).
func (c Cond) Version() uint64 { return c.version }

// IfMatch requires the current live version to be v (If-Match: "<v>").
func IfMatch(v uint64) Cond { return Cond{kind: CondVersion, version: v} }

// IfLive requires a live record (If-Match: *).
func IfLive() Cond { return Cond{kind: CondLive} }

// IfAbsent requires no live record (If-None-Match: *, PUT only); a
// tombstoned name counts as absent, and the new version continues its
// numbering.
func IfAbsent() Cond { return Cond{kind: CondAbsent} }

// Header returns the request header expressing c ("" when unconditional).
func (c Cond) Header() (key, value string) {
	switch c.kind {
	case CondVersion:
		return "If-Match", `"` + strconv.FormatUint(c.version, 10) + `"`
	case CondLive:
		return "If-Match", "*"
	case CondAbsent:
		return "If-None-Match", "*"
	}
	return "", ""
}

// retrySafe reports whether repeating a PUT under c cannot apply it twice:
// after a lost success, a retried If-Match "<v>" or If-None-Match * fails
// with 412 instead of adding another version.
func retrySafe(c Cond) bool {
	return c.kind == CondVersion || c.kind == CondAbsent
}
