package verify

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/ronhq/ron/roles/registry/registryapi/descriptor"
)

// DefaultRequestTimeout bounds each HTTP request when Options.RequestTimeout
// is zero.
const DefaultRequestTimeout = 30 * time.Second

// Options configure one verification run.
type Options struct {
	// URL is the registry's base URL (e.g. http://127.0.0.1:9444); a
	// trailing slash is ignored.
	URL string
	// LogKey pins the log's note verifier key: the key itself
	// ("<origin>+<8 hex>+<base64>") or the path of a file holding it.
	// Empty means unpinned: the key served at /registry/log/key is used
	// and a warning is written to Progress.
	LogKey string
	// Genesis, when set ("b3:…"), must equal version 0's payload_b3.
	Genesis string
	// StateFile, when set, holds the (origin, size, root) of the last
	// successful run: the new checkpoint must be consistent with it, and
	// a successful run rewrites it. A missing file is created.
	StateFile string
	// HTTP is the client used for every request (nil: http.DefaultClient).
	HTTP *http.Client
	// RequestTimeout bounds each request (0: DefaultRequestTimeout).
	RequestTimeout time.Duration
	// Progress receives warnings and progress lines (nil: discarded).
	Progress io.Writer
}

// ErrOptions wraps every error about Options themselves (URL, --genesis,
// --log-key, the state file): nothing was verified.
var ErrOptions = errors.New("verify: bad options")

// normalize fills defaults and trims the base URL.
func (o Options) normalize() (Options, error) {
	o.URL = strings.TrimRight(strings.TrimSpace(o.URL), "/")
	u, err := url.Parse(o.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return o, fmt.Errorf("%w: URL %q is not an http(s) URL", ErrOptions, o.URL)
	}
	if o.HTTP == nil {
		o.HTTP = http.DefaultClient
	}
	if o.RequestTimeout <= 0 {
		o.RequestTimeout = DefaultRequestTimeout
	}
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	if o.Genesis != "" && !descriptor.IsB3(o.Genesis) {
		return o, fmt.Errorf("%w: --genesis %q is not b3: and 64 lowercase hex digits", ErrOptions, o.Genesis)
	}
	return o, nil
}

// Result describes a log that passed every check.
type Result struct {
	URL      string `json:"url"`
	Origin   string `json:"origin"`
	Size     uint64 `json:"size"`
	Root     string `json:"root"`      // std base64 of the checkpoint root
	MinIndex uint64 `json:"min_index"` // first version whose leaf was checked
	Verified uint64 `json:"verified"`  // leaves checked (size − min_index)
	Tiles    int    `json:"tiles"`     // hash tiles fetched and compared
	Head     uint64 `json:"head"`      // /registry/head version
	Unpinned bool   `json:"unpinned"`  // the log key came from the server
	// PreviousSize is the size saved in StateFile before this run (0: none).
	PreviousSize uint64 `json:"previous_size,omitempty"`
	StateSaved   bool   `json:"state_saved,omitempty"`
}

// Names of the checks a Mismatch reports. The per-version and
// per-checkpoint ones are the deep verifier's (docs/registry.md §6, §8);
// the rest are this verifier's own.
const (
	CheckCanonical     = "canonical"      // leaf is not a well-formed, canonically encoded artifact
	CheckVersion       = "version"        // artifact version ≠ leaf index
	CheckPrevHash      = "prev_hash"      // prev_hash ≠ payload_b3 of version − 1 (ZeroHash for genesis)
	CheckPayloadB3     = "payload_b3"     // payload_b3 ≠ BLAKE3(JCS(payload))
	CheckRules         = "rules"          // payload breaks a docs/registry.md §1 item rule
	CheckSignature     = "signature"      // an approval fails, or genesis carries approvals
	CheckQuorum        = "quorum"         // fewer than m distinct valid signers
	CheckCommittedAt   = "committed_at"   // committed_at decreased (or genesis ≠ created_at)
	CheckLeaf          = "leaf"           // leaf hash ≠ level-0 tile hash
	CheckTile          = "tile"           // a served hash tile ≠ the hashes of the level below
	CheckRoot          = "root"           // recomputed root ≠ checkpoint root
	CheckCheckpointSig = "checkpoint_sig" // checkpoint signature does not verify
	CheckCheckpoint    = "checkpoint"     // checkpoint body malformed
	CheckBundle        = "bundle"         // entry bundle malformed or of the wrong length
	CheckInclusion     = "inclusion"      // tlog inclusion proof of the last leaf fails
	CheckArtifact      = "artifact"       // /registry/{size−1} ≠ the last leaf
	CheckHead          = "head"           // /registry/head behind the checkpoint or disagreeing
	CheckGenesis       = "genesis"        // version 0 ≠ the pinned genesis
	CheckConsistency   = "consistency"    // not consistent with the saved state (split view)
)

// Mismatch is a failed check. HasVersion says whether Version names the
// version (leaf index) where it was found.
type Mismatch struct {
	Check      string
	Version    uint64
	HasVersion bool
	Detail     string
}

func (m *Mismatch) Error() string {
	if m.HasVersion {
		return fmt.Sprintf("version %d: %s: %s", m.Version, m.Check, m.Detail)
	}
	return m.Check + ": " + m.Detail
}

// atVersion returns a Mismatch found at version v.
func atVersion(v uint64, check, format string, args ...any) *Mismatch {
	return &Mismatch{Check: check, Version: v, HasVersion: true, Detail: fmt.Sprintf(format, args...)}
}

// mismatch returns a Mismatch that names no version.
func mismatch(check, format string, args ...any) *Mismatch {
	return &Mismatch{Check: check, Detail: fmt.Sprintf(format, args...)}
}

// UnreachableError reports that the registry could not be reached (connection
// refused, DNS failure, …); the CLI exits 2 on it.
type UnreachableError struct {
	URL string
	Err error
}

func (e *UnreachableError) Error() string { return "unreachable: " + e.URL + ": " + e.Err.Error() }
func (e *UnreachableError) Unwrap() error { return e.Err }
