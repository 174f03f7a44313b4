package consensus

import (
	"errors"
	"fmt"
)

// ErrNoQuorum is the answer to a write while the group has no leader (a
// minority side of a partition, an election in progress, too few servers
// alive): nothing was applied, the caller may retry later.
var ErrNoQuorum = errors.New("consensus: no quorum: the control plane has no leader")

// ErrUnknownOutcome is the answer to a write whose entry was appended but
// whose commit was not seen: leadership was lost or the node shut down
// meanwhile. The entry may still commit; a caller retries only a write
// that is safe to repeat (a compare-and-swap, an idempotent id).
var ErrUnknownOutcome = errors.New("consensus: outcome unknown: leadership was lost before the write was seen committed")

// ErrClosed is the answer of a closed group.
var ErrClosed = errors.New("consensus: closed")

// NotLeaderError is the answer to a write given to a server that is not
// the leader while a leader is known: the caller forwards it there.
type NotLeaderError struct {
	LeaderID, LeaderAddr string
}

func (e *NotLeaderError) Error() string {
	return fmt.Sprintf("consensus: not the leader; the leader is %s at %s", e.LeaderID, e.LeaderAddr)
}
