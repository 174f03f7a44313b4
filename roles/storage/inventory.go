package storage

import (
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/roles/storage/storageapi"
	"github.com/ronhq/ron/store"
)

// inventoryReply is one page of GET /inventory.
type inventoryReply struct {
	Items []inventoryItem `json:"items"`
	Next  *string         `json:"next"`
}

type inventoryItem struct {
	ID   string `json:"id"`
	Size int64  `json:"size"`
}

// InventoryQuery is the parsed query of GET /inventory.
type InventoryQuery struct {
	After *store.ID
	Limit int
}

// ParseInventoryQuery validates `after` (an id, optional) and `limit`
// (1–10,000, default 1000). Unknown parameters are ignored.
func ParseInventoryQuery(after, limit string) (InventoryQuery, error) {
	q := InventoryQuery{Limit: 1000}
	if after != "" {
		id, err := store.ParseID(after)
		if err != nil {
			return q, httpx.NewError(http.StatusBadRequest, httpx.CodeBadRequest, "after must be an object id")
		}
		q.After = &id
	}
	if limit != "" {
		n, err := strconv.Atoi(limit)
		if err != nil || n < 1 || n > 10000 {
			return q, httpx.NewError(http.StatusBadRequest, httpx.CodeBadRequest, "limit must be an integer from 1 to 10000")
		}
		q.Limit = n
	}
	return q, nil
}

func (r *Role) handleInventory(c echo.Context) error {
	if err := r.authorize(c, storageapi.ScopeInventory); err != nil {
		return err
	}
	q, err := ParseInventoryQuery(c.QueryParam("after"), c.QueryParam("limit"))
	if err != nil {
		return err
	}
	return r.admitted(c, r.work.get, func() error {
		infos, err := r.engine.List(c.Request().Context(), q.After, q.Limit)
		if err != nil {
			return err
		}
		reply := inventoryReply{Items: make([]inventoryItem, len(infos))}
		for i, in := range infos {
			reply.Items[i] = inventoryItem{ID: in.ID.String(), Size: in.Size}
		}
		if len(infos) == q.Limit {
			next := infos[len(infos)-1].ID.String()
			reply.Next = &next
		}
		return c.JSON(http.StatusOK, reply)
	})
}

// hasRequest is the body of POST /inventory/has.
type hasRequest struct {
	IDs []string `json:"ids"`
}

// ParseHasRequest decodes and validates a POST /inventory/has body: strict
// JSON (400 malformed), 1–1000 valid ids (400 bad_request).
func ParseHasRequest(body []byte) ([]store.ID, error) {
	var req hasRequest
	if err := httpx.DecodeStrictJSON(body, &req); err != nil {
		return nil, err
	}
	if len(req.IDs) < 1 || len(req.IDs) > 1000 {
		return nil, httpx.NewError(http.StatusBadRequest, httpx.CodeBadRequest, "ids must hold 1 to 1000 ids")
	}
	ids := make([]store.ID, len(req.IDs))
	for i, s := range req.IDs {
		id, err := store.ParseID(s)
		if err != nil {
			return nil, httpx.NewError(http.StatusBadRequest, httpx.CodeBadRequest, "ids[%d] is not an object id", i)
		}
		ids[i] = id
	}
	return ids, nil
}

func (r *Role) handleHas(c echo.Context) error {
	if err := r.authorize(c, storageapi.ScopeInventory); err != nil {
		return err
	}
	body, err := httpx.ReadBody(c.Request())
	if err != nil {
		return err
	}
	ids, err := ParseHasRequest(body)
	if err != nil {
		return err
	}
	return r.admitted(c, r.work.get, func() error {
		held, err := r.engine.Has(c.Request().Context(), ids)
		if err != nil {
			return err
		}
		present := make([]string, 0, len(ids))
		for i, ok := range held {
			if ok {
				present = append(present, ids[i].String())
			}
		}
		return c.JSON(http.StatusOK, map[string][]string{"present": present})
	})
}
