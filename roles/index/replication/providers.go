package replication

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/roles/index/indexapi"
	"github.com/ronhq/ron/roles/index/ownership"
)

// Announce applies a provider batch in cluster mode (docs/cluster.md §6);
// the caller has validated the whole batch. Each record goes to its owners:
// this node stores the records it owns, and every other owner gets its
// records in one POST /replica/providers (never forwarded again). The
// answer is as POST /providers when every record is on at least W_idx
// owners, else 503 upstream_unavailable with details.failed (the failing
// records' positions) and details.required; callers resend the batch.
func (n *Node) Announce(ctx context.Context, recs []indexapi.Announcement) (indexapi.AnnounceReply, error) {
	own := n.ownership()
	need := own.WIdx()
	groups := groupByOwner(own, recs)
	copies := make([]int, len(recs))
	if idx := groups[own.Self()]; len(idx) > 0 {
		if _, err := n.local.ApplyProviders(ctx, pick(recs, idx)); err == nil {
			count(copies, idx)
		}
		delete(groups, own.Self())
	}
	n.replicateProviders(ctx, groups, recs, copies)
	n.local.InvalidateObjects(recs)
	failed := short(copies, need)
	n.ownerWrites(ownerProvider, resultOK, len(recs)-len(failed))
	n.ownerWrites(ownerProvider, resultFailed, len(failed))
	if len(failed) > 0 {
		return indexapi.AnnounceReply{}, httpx.NewError(http.StatusServiceUnavailable, httpx.CodeUpstreamUnavailable,
			"%d of %d provider records reached fewer than %d index owners", len(failed), len(recs), need).
			WithDetails(map[string]any{"failed": failed, "required": need})
	}
	return tally(recs), nil
}

// short returns the positions of copies below need.
func short(copies []int, need int) []int {
	var failed []int
	for i, c := range copies {
		if c < need {
			failed = append(failed, i)
		}
	}
	return failed
}

// groupByOwner maps each owner's node id to the positions of the records
// it owns.
func groupByOwner(own ownership.View, recs []indexapi.Announcement) map[string][]int {
	groups := map[string][]int{}
	for i, a := range recs {
		for _, m := range own.Owners(ownership.ObjectKey(a.ID)) {
			groups[m.ID] = append(groups[m.ID], i)
		}
	}
	return groups
}

// replicateProviders sends every owner its records (POST
// /replica/providers, concurrently, each under ownership.Peers.Post's
// timeout even if the client went away) and counts the stored copies in
// copies.
func (n *Node) replicateProviders(ctx context.Context, groups map[string][]int, recs []indexapi.Announcement, copies []int) {
	if len(groups) == 0 {
		return
	}
	ids := make([]string, 0, len(groups))
	bodies := make([][]byte, 0, len(groups))
	for id, idx := range groups {
		ids = append(ids, id)
		bodies = append(bodies, encodeAnnounce(pick(recs, idx)))
	}
	for i, ok := range n.fanOut(context.WithoutCancel(ctx), ids, PathReplicaProviders, bodies) {
		if ok {
			count(copies, groups[ids[i]])
		}
	}
}

// encodeAnnounce is the POST /providers body of recs
// (indexapi.NewAnnounceBody), every ttl_s explicit. HTML characters
// are not escaped: a type or addr full of '<' or '&' would otherwise grow
// sixfold, and a batch the receiving node accepted could exceed the
// owners' body cap (httpx.JSONBodyCap) and fail on every resend.
func encodeAnnounce(recs []indexapi.Announcement) []byte {
	in := indexapi.NewAnnounceBody(recs)
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(in) // strings and integers only: cannot fail
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// pick returns recs at positions idx.
func pick[T any](recs []T, idx []int) []T {
	out := make([]T, len(idx))
	for i, j := range idx {
		out[i] = recs[j]
	}
	return out
}

// count adds one copy to each position of idx.
func count(copies []int, idx []int) {
	for _, i := range idx {
		copies[i]++
	}
}

// tally counts a batch's records: accepted (TTL > 0) and withdrawn.
func tally(recs []indexapi.Announcement) indexapi.AnnounceReply {
	var r indexapi.AnnounceReply
	for _, a := range recs {
		if a.TTL == 0 {
			r.Withdrawn++
		} else {
			r.Accepted++
		}
	}
	return r
}
