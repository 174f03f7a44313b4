// Package verified is the verified transfer of docs/storage.md §4: an
// object's Bao outboard (GET /o/{b3}/outboard) is parsed strictly
// (ParseTree), and a stream of the object's bytes, whole or a group-aligned
// range, is read through a Reader that releases each 64 KiB group only
// after bao.VerifyGroup proved it against the object id: the group's
// chaining value and the parents on its path hash up to the id. Nothing
// else is trusted — not the source of the bytes, not the source of the
// outboard — and nothing is held back: every released byte is the object's
// own, at its own offset, whatever the sources send.
//
// Size authentication: the size an outboard states (its 8-byte header) is
// proven only when the object's last group verifies, because only that
// group's length and place in the tree depend on it (the outboard's length
// does only through the group count, so a source may state a size a few
// bytes off, or with the same left subtree, and still have every other
// group it shares with the true tree verify). A reader that reads the whole
// object, or any range that ends in the last group, ends with that group,
// so a false size ends in a mismatch (or a short stream) before any wrong
// byte is released. A range that stops earlier releases proven bytes, but
// an answer framed with the total size (a 206's Content-Range total, a
// 416's "bytes */N") needs the size proven first: Tree.ReachesLast tells
// when, Sizes remembers the sizes proven (Check refuses another size for a
// known id), and vfetch's ProveSize reads the last group. The empty
// object's size is proven by its id (ParseTree, Sizes.Check).
//
// The package does no I/O of its own and starts no goroutines; callers bound
// the underlying reads (deadlines, progress timers).
package verified

import (
	"errors"

	"github.com/ronhq/ron/store/bao"
)

var (
	// ErrMismatch is matched (errors.Is) by every *MismatchError: a group
	// did not verify against the id (wrong bytes, or an outboard that is
	// not the object's), or an empty stream was offered for an id that is
	// not the empty object's. It is bao.ErrMismatch.
	ErrMismatch = bao.ErrMismatch
	// ErrShort: the stream ended (EOF) before the expected bytes arrived.
	ErrShort = errors.New("verified: stream ended early")
	// ErrLong: the stream went on past the expected bytes.
	ErrLong = errors.New("verified: stream longer than expected")
	// ErrBadOutboard is wrapped by ParseTree errors and by the error of a
	// Reader built on an inconsistent Tree or group range: the shape is
	// wrong, whatever the bytes. It is bao.ErrBadOutboard.
	ErrBadOutboard = bao.ErrBadOutboard
)

// MismatchError reports the first group (0-based, of the whole object)
// that did not verify against the id; for the empty object, group 0. It is
// bao.MismatchError.
type MismatchError = bao.MismatchError
