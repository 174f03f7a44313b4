package descriptor

import (
	"net/http"
	"strconv"

	"github.com/ronhq/ron/httpx"
)

// The registry's envelope codes (docs/registry.md §3), defined in httpx.
const (
	CodeChainMismatch     = httpx.CodeChainMismatch
	CodeDuplicateApproval = httpx.CodeDuplicateApproval
	CodeInvalidSig        = httpx.CodeInvalidSig
	CodeQuorumFailed      = httpx.CodeQuorumFailed
)

// Values of details.reason. Malformed inputs carry the first four; 413 carries
// ReasonMaxPayload; 422 invalid_sig carries the four docs/registry.md §3 reasons; everything
// else is a 400 bad_request reason.
const (
	ReasonSyntax        = "syntax"        // not JSON, bad UTF-8, trailing data, duplicate key, lone surrogate
	ReasonUnknownField  = "unknown_field" // member not allowed in this object
	ReasonMissingField  = "missing_field" // required member absent
	ReasonWrongType     = "wrong_type"    // member of the wrong JSON type (null included)
	ReasonBadSig        = "sig_encoding"  // sig not std padded base64 of exactly 64 bytes (400 malformed)
	ReasonMaxPayload    = "max_payload_bytes"
	ReasonIntegerRange  = "integer_range" // a number outside ±(2^53−1)
	ReasonNesting       = "nesting"       // containers nested deeper than MaxDepth
	ReasonItemCount     = "item_count"    // not 1–MaxItems items
	ReasonUnknownKind   = "unknown_kind"
	ReasonDuplicateItem = "duplicate_item" // (kind, id) seen before
	ReasonInvalidID     = "invalid_id"
	ReasonInvalidValue  = "invalid_value" // any other field rule
	ReasonQuorum        = "quorum"        // quorum missing or inconsistent with the signers
	ReasonInvalidTime   = "invalid_time"  // not RFC 3339 or over 40 bytes
	ReasonFutureTime    = "future_time"   // later than now + clock_skew
	ReasonSchema        = "schema_version"
	ReasonHashMismatch  = "payload_b3_mismatch" // details.computed holds the server's value
	ReasonProposalID    = "proposal_id"
	ReasonPinMismatch   = "trust_roots_b3" // trust-roots file does not match its pin
	ReasonChain         = "chain"          // artifact version/prev_hash differ from its payload's
	ReasonUnsupported   = "unsupported_algo"
	ReasonUnknownSigner = "unknown_signer"
	ReasonRevoked       = "revoked_signer"
	ReasonBadSignature  = "bad_signature"
)

// loc names where a rule failed: item is the index in items (−1 for members
// outside the items array), field the member name ("" for the whole value).
type loc struct {
	item  int
	field string
}

// top is the location of a member outside the items array.
func top(field string) loc { return loc{item: -1, field: field} }

// in returns l narrowed to the member field of the same item. The name may
// come from the input, so it is clipped.
func (l loc) in(field string) loc {
	field = clip(field)
	if l.field != "" {
		field = l.field + "." + field
	}
	return loc{item: l.item, field: field}
}

func (l loc) details(reason string) map[string]any {
	d := map[string]any{"reason": reason}
	if l.item >= 0 {
		d["item"] = l.item
	}
	if l.field != "" {
		d["field"] = l.field
	}
	return d
}

// prefix renders l for messages: `items[3].pubkey: `.
func (l loc) prefix() string {
	switch {
	case l.item >= 0 && l.field != "":
		return "items[" + strconv.Itoa(l.item) + "]." + l.field + ": "
	case l.item >= 0:
		return "items[" + strconv.Itoa(l.item) + "]: "
	case l.field != "":
		return l.field + ": "
	}
	return ""
}

// malformed is a 400 malformed error at l.
func malformed(l loc, reason, format string, args ...any) *httpx.Error {
	return fail(http.StatusBadRequest, httpx.CodeMalformed, l, reason, format, args...)
}

// badRequest is a 400 bad_request error at l.
func badRequest(l loc, reason, format string, args ...any) *httpx.Error {
	return fail(http.StatusBadRequest, httpx.CodeBadRequest, l, reason, format, args...)
}

// invalidSig is a 422 invalid_sig error with the given reason.
func invalidSig(reason, format string, args ...any) *httpx.Error {
	return fail(http.StatusUnprocessableEntity, CodeInvalidSig, loc{item: -1}, reason, format, args...)
}

func fail(status int, code string, l loc, reason, format string, args ...any) *httpx.Error {
	args = append([]any{l.prefix()}, args...)
	return httpx.NewError(status, code, "%s"+format, args...).WithDetails(l.details(reason))
}
