package httpapi

import (
	"context"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/roles/registry/committer"
	"github.com/ronhq/ron/roles/registry/registryapi"
	"github.com/ronhq/ron/roles/registry/registryapi/descriptor"
)

// writable returns the 503 a write gets now: read_only → not_ready
// (maintenance, Retry-After 30); draining → draining (Retry-After 5); any
// other write-unready reason → not_ready with that reason (Retry-After 5).
func (a *API) writable() error {
	if a.settings().ReadOnly {
		return errNotReady(committer.ReasonMaintenance)
	}
	reasons := a.c.WriteUnready()
	switch {
	case len(reasons) == 0:
		return nil
	case reasons[0] == committer.ReasonDraining:
		return errDraining()
	}
	return errNotReady(reasons[0])
}

// doPropose runs the docs/registry.md §2 propose checks: write readiness, decode →
// canonicalise and size → item rules → payload_b3, then hands the set to
// the committer (chain check, open-proposal cap, enqueue).
func (a *API) doPropose(ctx context.Context, body []byte, corr string) (registryapi.Proposed, error) {
	if err := a.writable(); err != nil {
		return registryapi.Proposed{}, a.rejected(opPropose, corr, "", err)
	}
	st := a.settings()
	set, err := descriptor.DecodePropose(body, st.Limits, a.opt.Now())
	if err != nil {
		return registryapi.Proposed{}, a.rejected(opPropose, corr, "", err)
	}
	ctx, cancel := context.WithTimeout(ctx, st.CommitTimeout)
	defer cancel()
	return a.c.Propose(ctx, set, corr)
}

// doApprove runs the approve checks: write readiness, id form, the body's
// decode rules, then the committer's existence, state, algo, signer,
// signature (under the CPU semaphore) and duplicate checks.
func (a *API) doApprove(ctx context.Context, id string, body []byte, corr string) (registryapi.ApprovalResult, error) {
	if err := a.writable(); err != nil {
		return registryapi.ApprovalResult{}, a.rejected(opApprove, corr, id, err)
	}
	if err := descriptor.ParseProposalID(id); err != nil {
		return registryapi.ApprovalResult{}, a.rejected(opApprove, corr, id, err)
	}
	st := a.settings()
	ap, err := descriptor.DecodeApproval(body, st.Limits, a.opt.Now())
	if err != nil {
		return registryapi.ApprovalResult{}, a.rejected(opApprove, corr, id, err)
	}
	ctx, cancel := context.WithTimeout(ctx, st.CommitTimeout)
	defer cancel()
	return a.c.Approve(ctx, id, ap, corr)
}

// doCommit runs the commit checks: write readiness, id form, then the
// committer's (expired, committed → same 201, chain, quorum).
func (a *API) doCommit(ctx context.Context, id, corr string) (registryapi.Committed, error) {
	if err := a.writable(); err != nil {
		return registryapi.Committed{}, a.rejected(opCommit, corr, id, err)
	}
	if err := descriptor.ParseProposalID(id); err != nil {
		return registryapi.Committed{}, a.rejected(opCommit, corr, id, err)
	}
	ctx, cancel := context.WithTimeout(ctx, a.settings().CommitTimeout)
	defer cancel()
	cm, err := a.c.Commit(ctx, id, corr)
	if err != nil {
		return registryapi.Committed{}, err
	}
	return registryapi.Committed{Version: cm.Version, PayloadB3: cm.PayloadB3, CommittedAt: cm.CommittedAt}, nil
}

// postProposal answers POST /registry/proposals: 202 + Location.
func (a *API) postProposal(c echo.Context) error {
	body, err := a.jsonBody(c, opPropose, "")
	if err != nil {
		return err
	}
	p, err := a.doPropose(c.Request().Context(), body, corrID(c))
	if err != nil {
		return err
	}
	location(c, "/registry/proposals/"+p.ProposalID)
	return writeJSON(c, http.StatusAccepted, p, ccNoStore)
}

// postApproval answers POST /registry/approvals/{id}: 200.
func (a *API) postApproval(c echo.Context) error {
	id := c.Param("id")
	body, err := a.jsonBody(c, opApprove, id)
	if err != nil {
		return err
	}
	res, err := a.doApprove(c.Request().Context(), id, body, corrID(c))
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, res, ccNoStore)
}

// postCommit answers POST /registry/commit/{id}: 201 + Location of the new
// version; the body is empty or {}.
func (a *API) postCommit(c echo.Context) error {
	id := c.Param("id")
	body, err := readBody(c.Response(), c.Request())
	if err == nil {
		err = checkCommitBody(c.Request(), body)
	}
	if err != nil {
		return a.rejected(opCommit, corrID(c), id, err)
	}
	cm, err := a.doCommit(c.Request().Context(), id, corrID(c))
	if err != nil {
		return err
	}
	location(c, "/registry/"+strconv.FormatUint(cm.Version, 10))
	return writeJSON(c, http.StatusCreated, cm, ccNoStore)
}

// jsonBody checks Content-Type (415) and reads the body (413); failures
// are audited as rejections of op.
func (a *API) jsonBody(c echo.Context, op, id string) ([]byte, error) {
	err := httpx.RequireJSON(c.Request())
	var body []byte
	if err == nil {
		body, err = readBody(c.Response(), c.Request())
	}
	if err != nil {
		return nil, a.rejected(op, corrID(c), id, err)
	}
	return body, nil
}
