package httpapi

import (
	"github.com/labstack/echo/v4"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/httpx/auth"
	"github.com/ronhq/ron/roles/registry/registryapi"
)

// requireScope is route middleware checking the bearer token for scope:
// none or invalid → 401 unauthorized, wrong scope → 403 forbidden.
func (a *API) requireScope(scope string) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if _, err := auth.Check(a.opt.Keys, c.Request(), scope, a.opt.Now()); err != nil {
				return err
			}
			return next(c)
		}
	}
}

// readScope is route middleware requiring registry:read when public_reads
// is false.
func (a *API) readScope(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if !a.settings().PublicReads {
			if _, err := auth.Check(a.opt.Keys, c.Request(), registryapi.ScopeRead, a.opt.Now()); err != nil {
				return err
			}
		}
		return next(c)
	}
}

// corrID returns the request's correlation id: the one the middleware
// echoed, else a well-formed request header, else "".
func corrID(c echo.Context) string {
	if id := httpx.CorrID(c); id != "" {
		return id
	}
	if id := c.Request().Header.Get(httpx.HeaderCorrID); httpx.ValidCorrID(id) {
		return id
	}
	return ""
}
