package tiles

import "errors"

var (
	// ErrBadPath: a tile path, or a Tile argument, that is not canonical C2SP
	// tlog-tiles syntax (HTTP 400).
	ErrBadPath = errors.New("tiles: bad tile path")
	// ErrNotFound: a tile, leaf or tree size not covered by the published
	// checkpoint (HTTP 404).
	ErrNotFound = errors.New("tiles: not covered by the checkpoint")
	// ErrSplitView: the tree's root at the previous checkpoint's size no
	// longer equals that checkpoint's root, so signing would publish a split
	// view. Nothing is written.
	ErrSplitView = errors.New("tiles: split view: root at previous checkpoint size changed")
	// ErrBadCheckpoint: a checkpoint note that does not verify with the log
	// key or is not exactly "<origin>\n<size>\n<base64 root>\n".
	ErrBadCheckpoint = errors.New("tiles: bad checkpoint")
	// ErrBadKey: a log key (file or string) that is not a valid Ed25519 note
	// signer key.
	ErrBadKey = errors.New("tiles: bad log key")
	// ErrBadOrigin: an origin (key name) that is empty, not UTF-8, or holds
	// whitespace, control characters or '+'.
	ErrBadOrigin = errors.New("tiles: bad origin")
	// ErrOriginMismatch: the stored log key names another origin than the
	// one configured (the origin is fixed when the log is created).
	ErrOriginMismatch = errors.New("tiles: log key origin differs from the configured origin")
	// ErrLeafTooLarge: a leaf longer than MaxLeafSize, which an entry bundle
	// cannot carry.
	ErrLeafTooLarge = errors.New("tiles: leaf too large")
	// ErrCorrupt: stored tiles are missing or have the wrong length for the
	// stored checkpoint's size.
	ErrCorrupt = errors.New("tiles: stored tiles inconsistent with the checkpoint")
	// ErrBadRange: proof arguments out of order (index ≥ size, size1 = 0 or
	// size1 > size2).
	ErrBadRange = errors.New("tiles: bad proof range")
)
