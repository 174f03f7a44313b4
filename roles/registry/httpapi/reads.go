package httpapi

import (
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/httpx/content"
	"github.com/ronhq/ron/roles/registry/committer"
	"github.com/ronhq/ron/roles/registry/registryapi"
	"github.com/ronhq/ron/roles/registry/registryapi/descriptor"
	"github.com/ronhq/ron/roles/registry/segment"
)

// doHead returns the committed HEAD; 503 not_ready (no_log) when there is
// none yet (a replicated registry before its init entry).
func (a *API) doHead() (registryapi.Head, error) {
	h := a.c.Head()
	if h == nil {
		return registryapi.Head{}, errNoLog()
	}
	return registryapi.Head{Version: h.Version, PayloadB3: h.PayloadB3, CommittedAt: h.CommittedAt}, nil
}

// errNoLog is 503 not_ready (no_log): the replicated registry has no HEAD
// here yet.
func errNoLog() error {
	return httpx.NewError(http.StatusServiceUnavailable, httpx.CodeNotReady,
		"the registry's log is not initialised here yet (the control plane's init entry is not applied)").
		WithRetryAfter(1).WithDetails(map[string]any{"reason": committer.ReasonNoLog})
}

// getHead answers GET /registry/head from the snapshot's pre-encoded body:
// ETag "<version>-<16 hex>", no-cache, 304 on a matching If-None-Match.
func (a *API) getHead(c echo.Context) error {
	h := a.c.Head()
	if h == nil {
		return errNoLog()
	}
	if done, err := conditional(c, h.ETag, ccNoCache); done {
		return err
	}
	return writeBytes(c, http.StatusOK, echo.MIMEApplicationJSON, h.Body, "")
}

// parseVersion accepts a canonical decimal uint64 ("0", or digits without
// a leading zero); anything else is 400 bad_request.
func parseVersion(s string) (uint64, error) {
	bad := s == "" || len(s) > 20 || (len(s) > 1 && s[0] == '0')
	for i := 0; !bad && i < len(s); i++ {
		bad = s[i] < '0' || s[i] > '9'
	}
	v, err := strconv.ParseUint(s, 10, 64)
	if bad || err != nil {
		return 0, errBadRequest(reasonVersion, "version %.32q is not a canonical decimal", s)
	}
	return v, nil
}

// doGet returns the artifact bytes of version v: 410 gone (pruned) below
// min_index, 404 above HEAD.
func (a *API) doGet(v uint64) ([]byte, error) {
	if min := a.opt.MinIndex(); v < min {
		return nil, errGone(reasonPruned, "version %d is below min_index %d", v, min)
	}
	h := a.c.Head()
	if h == nil {
		return nil, errNoLog()
	}
	switch {
	case v > h.Version:
		return nil, errNotFound("version %d is beyond HEAD %d", v, h.Version)
	case v == h.Version:
		return h.Artifact, nil
	}
	rec, err := a.opt.Log.Read(v)
	if err != nil {
		return nil, logError(v, err)
	}
	return rec.Artifact, nil
}

// logError maps a segment log read error for version v onto the envelope.
func logError(v uint64, err error) error {
	switch {
	case errors.Is(err, segment.ErrPruned):
		return errGone(reasonPruned, "version %d is pruned", v)
	case errors.Is(err, segment.ErrNotFound):
		return errNotFound("version %d is not in the log", v)
	case errors.Is(err, segment.ErrCorrupt):
		return errCorrupt("version %d: %v", v, err)
	}
	return errInternal("read version %d: %v", v, err)
}

// getVersion answers GET /registry/{version}: the artifact's canonical
// bytes, ETag "b3:<BLAKE3 of body>", cached as immutable.
func (a *API) getVersion(c echo.Context) error {
	if strings.Contains(c.Param("version"), "/") {
		// echo backtracks here from a deeper path (e.g. a GET on a
		// POST-only route): no such resource.
		return errNotFound("no such route")
	}
	v, err := parseVersion(c.Param("version"))
	if err != nil {
		return err
	}
	body, err := a.doGet(v)
	if err != nil {
		return err
	}
	if done, err := conditional(c, `"`+descriptor.PayloadB3(body)+`"`, content.Immutable); done {
		return err
	}
	return writeBytes(c, http.StatusOK, echo.MIMEApplicationJSON, body, "")
}

// listProposals answers GET /registry/proposals: open ones, oldest first.
func (a *API) listProposals(c echo.Context) error {
	return writeJSON(c, http.StatusOK, registryapi.ProposalList{Proposals: a.c.OpenProposals()}, ccNoCache)
}

// getProposal answers GET /registry/proposals/{id}: 400 for a malformed id,
// 404 unknown or deleted, 410 expired.
func (a *API) getProposal(c echo.Context) error {
	v, err := a.c.Proposal(c.Param("id"))
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, v, ccNoCache)
}

// getStatus answers GET /registry/status (no-store) with the role's body.
func (a *API) getStatus(c echo.Context) error {
	if a.opt.Status == nil {
		return httpx.NewError(http.StatusServiceUnavailable, httpx.CodeNotReady, "status not available").
			WithRetryAfter(retryUnready)
	}
	return writeJSON(c, http.StatusOK, a.opt.Status(), ccNoStore)
}
