package edgecache

import "errors"

var (
	// ErrMismatch: the bytes of a fill do not hash to the id it was committed
	// under. The fill is aborted and nothing is stored.
	ErrMismatch = errors.New("edgecache: content does not match its id")
	// ErrAborted is what followers of a fill get when it was aborted with a
	// nil error.
	ErrAborted = errors.New("edgecache: fill aborted")
	// ErrClosed: the cache was closed; fills cannot be started or committed.
	ErrClosed = errors.New("edgecache: cache closed")
	// ErrSize: a fill's length differs from the size hint it was started with.
	ErrSize = errors.New("edgecache: fill length differs from its size hint")
	// ErrFinished: Write or Commit on a fill that was already committed or
	// aborted.
	ErrFinished = errors.New("edgecache: fill already finished")
	// ErrUnhashed: CommitAsset on a proven fill (NewProvenFill), whose bytes
	// the cache did not hash: it can only be committed as an object.
	ErrUnhashed = errors.New("edgecache: a proven fill has no hash of its own")
)
