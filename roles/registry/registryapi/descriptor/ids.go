package descriptor

import (
	"regexp"
	"strings"
)

var (
	signerIDRe   = regexp.MustCompile(`^org:[a-z0-9][a-z0-9.-]{0,62}#[A-Za-z0-9._-]{1,64}$`)
	itemIDRe     = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:#/@-]{0,127}$`)
	zoneRe       = regexp.MustCompile(`^[A-Za-z0-9._-]{0,64}$`)
	proposalIDRe = regexp.MustCompile(`^p_[0-9a-f]{32}$`)
)

// IsSignerID reports whether s is a valid signer id:
// ^org:[a-z0-9][a-z0-9.-]{0,62}#[A-Za-z0-9._-]{1,64}$.
func IsSignerID(s string) bool { return signerIDRe.MatchString(s) }

// IsItemID reports whether s is a valid id for items other than signers:
// ^[A-Za-z0-9][A-Za-z0-9._:#/@-]{0,127}$.
func IsItemID(s string) bool { return itemIDRe.MatchString(s) }

// ProposalID returns the proposal id of a payload: "p_" and the first 32
// hex digits of payloadB3 (which is expected to satisfy IsB3; a shorter
// value contributes what it has).
func ProposalID(payloadB3 string) string {
	h := strings.TrimPrefix(payloadB3, "b3:")
	return "p_" + h[:min(32, len(h))]
}

// ParseProposalID accepts exactly "p_" and 32 lowercase hex digits; anything
// else is 400 bad_request (proposal_id).
func ParseProposalID(s string) error {
	if !proposalIDRe.MatchString(s) {
		return badRequest(top(""), ReasonProposalID, "proposal id %q is not p_ and 32 lowercase hex digits", clip(s))
	}
	return nil
}
