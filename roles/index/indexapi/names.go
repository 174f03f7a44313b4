package indexapi

import (
	"strconv"
	"strings"
)

// NameRecord is a live name record on the wire (docs/index.md §3).
type NameRecord struct {
	Name      string `json:"name"`
	B3        string `json:"b3"`
	Version   uint64 `json:"version"`
	UpdatedAt string `json:"updated_at"`
}

// NameDeletion answers DELETE /names/{name}.
type NameDeletion struct {
	Name      string `json:"name"`
	Version   uint64 `json:"version"`
	Deleted   bool   `json:"deleted"`
	UpdatedAt string `json:"updated_at"`
}

// NameVersion is one entry of GET /names/{name}/versions; B3 is null on
// tombstones.
type NameVersion struct {
	Version   uint64  `json:"version"`
	B3        *string `json:"b3"`
	Deleted   bool    `json:"deleted"`
	UpdatedAt string  `json:"updated_at"`
}

// NameHistory answers GET /names/{name}/versions.
type NameHistory struct {
	Name     string        `json:"name"`
	Versions []NameVersion `json:"versions"`
}

// Name syntax limits (docs/index.md §3).
const (
	MaxNameLen  = 253
	MaxLabelLen = 63
)

// ParseName checks name syntax and returns the name unchanged: labels of
// [a-z0-9-], 1–63 characters, no leading or trailing '-', joined by single
// dots, total ≤ 253 characters. No case folding or normalization: anything
// else (uppercase, '_', spaces, non-ASCII, empty labels) is an error
// wrapping ErrInvalid.
func ParseName(s string) (string, error) {
	if s == "" {
		return "", Invalidf("empty name")
	}
	if len(s) > MaxNameLen {
		return "", Invalidf("name longer than %d bytes", MaxNameLen)
	}
	for i, label := range strings.Split(s, ".") {
		if err := checkLabel(label); err != nil {
			return "", Invalidf("name label %d: %s", i, err)
		}
	}
	return s, nil
}

type labelError string

func (e labelError) Error() string { return string(e) }

// checkLabel validates one dot-separated label.
func checkLabel(l string) error {
	switch {
	case l == "":
		return labelError("empty label")
	case len(l) > MaxLabelLen:
		return labelError("longer than 63 characters")
	case l[0] == '-' || l[len(l)-1] == '-':
		return labelError("leading or trailing '-'")
	}
	for i := 0; i < len(l); i++ {
		c := l[i]
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' {
			return labelError("character " + strconv.QuoteRune(rune(c)) + " not in [a-z0-9-]")
		}
	}
	return nil
}

// ParseNameVersion parses "name@version" (GET /names/{name}@{version} and
// resolve keys). The version is a positive decimal without sign or leading
// zeros; "@0", "@01", "@-1", "@abc" and a trailing '@' are errors wrapping
// ErrInvalid. A key without '@' is rejected too: use ParseName.
func ParseNameVersion(s string) (string, uint64, error) {
	name, ver, ok := strings.Cut(s, "@")
	if !ok {
		return "", 0, Invalidf("missing @version")
	}
	if _, err := ParseName(name); err != nil {
		return "", 0, err
	}
	v, err := ParseVersion(ver)
	if err != nil {
		return "", 0, err
	}
	return name, v, nil
}

// ParseVersion parses a version number: 1–20 decimal digits, no sign, no
// leading zero, ≥ 1. Errors wrap ErrInvalid.
func ParseVersion(s string) (uint64, error) {
	if s == "" || s[0] == '0' || len(s) > 20 {
		return 0, Invalidf("bad version %q", s)
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, Invalidf("bad version %q", s)
		}
	}
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, Invalidf("bad version %q", s)
	}
	return v, nil
}

// CheckName validates a name: nil, or the 400 bad_request envelope of its
// syntax error (ParseName).
func CheckName(name string) error {
	if _, err := ParseName(name); err != nil {
		return InvalidInput(err)
	}
	return nil
}

// Freshness headers of a name read from a cluster index (docs/cluster.md
// §14): reads are local to the node that answers, so it says how current
// it is — the last control-plane log index applied there, whether it knows
// a leader, and how long ago, in milliseconds, it last heard from the
// leader (0 on the leader). A read with ?consistent=1 is linearizable.
const (
	HeaderAppliedIndex = "X-Ron-Applied-Index"
	HeaderKnownLeader  = "X-Ron-Known-Leader"
	HeaderLastContact  = "X-Ron-Last-Contact"
)
