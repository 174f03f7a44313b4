package storage

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/ronhq/ron/roles/storage/announcing"
	"github.com/ronhq/ron/roles/storage/storageapi"
)

// handleDelete answers DELETE /o/{b3} (docs/storage.md §2): admin scope; the
// object is removed and its provider record withdrawn.
func (r *Role) handleDelete(c echo.Context) error {
	if err := r.authorize(c, storageapi.ScopeAdmin); err != nil {
		return err
	}
	id, err := parseID(c)
	if err != nil {
		return err
	}
	return r.admitted(c, r.work.get, func() error {
		if err := r.engine.Delete(c.Request().Context(), id); err != nil {
			return storeError(err)
		}
		r.announce.enqueue(announcing.Record{ID: id, TTL: 0})
		return c.NoContent(http.StatusNoContent)
	})
}
