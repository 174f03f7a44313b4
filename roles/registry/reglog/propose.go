package reglog

import (
	"context"
	"fmt"

	"github.com/ronhq/ron/runtime/consensus"
)

// Propose appends e through plane as a registry entry and returns once it
// is committed and applied here: the state machine's verdict (a malformed
// entry) or the plane's error (consensus.ErrNoQuorum, *consensus.NotLeaderError:
// nothing was written; consensus.ErrUnknownOutcome: it may still commit).
func Propose(ctx context.Context, plane *consensus.Plane, e Entry) error {
	b, err := Encode(e)
	if err != nil {
		return err
	}
	resp, err := plane.Propose(ctx, consensus.KindRegistry, b)
	if err != nil {
		return err
	}
	res, ok := resp.(Result)
	if !ok {
		return fmt.Errorf("reglog: the state machine answered %T", resp)
	}
	return res.Err
}
