package gateway

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/andybalholm/brotli"

	"github.com/ronhq/ron/roles/index/indexapi"
	"github.com/ronhq/ron/store"
	"github.com/ronhq/ron/store/verified"
)

// object is one object a fake storage node or provider holds.
type object struct {
	data  []byte
	ctype string
}

// serveObjects answers as a storage node holding objs: GET|HEAD /o/{b3}
// (Range and conditionals via http.ServeContent) and GET /o/{b3}/outboard
// (the object's Bao outboard); anything else is a 404 envelope. A corrupt
// node serves every object with one byte flipped under its true outboard.
func serveObjects(corrupt bool, objs ...object) func(http.ResponseWriter, *http.Request, []byte) {
	byID := map[store.ID]object{}
	for _, o := range objs {
		byID[store.Sum(o.data)] = o
	}
	return func(w http.ResponseWriter, r *http.Request, _ []byte) {
		rest, isObject := strings.CutPrefix(r.URL.Path, "/o/")
		raw, outboard := strings.CutSuffix(rest, "/outboard")
		id, err := store.ParseID(raw)
		o, found := byID[id]
		if !isObject || err != nil || !found {
			status(http.StatusNotFound, "not_found")(w, r, nil)
			return
		}
		if outboard {
			w.Header().Set("Content-Type", "application/octet-stream")
			_, _ = w.Write(verified.TreeOf(o.data).Outboard)
			return
		}
		data := o.data
		if corrupt {
			data = bytes.Clone(data)
			data[len(data)/2] ^= 0xff
		}
		w.Header().Set("Content-Type", o.ctype)
		w.Header().Set("ETag", `"`+id.String()+`"`)
		http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(data))
	}
}

// serveIndex answers as an index: GET /providers/{b3} lists providers[id]
// (none for an unknown id) and GET /resolve/{name} answers names[name]
// (404 for an unknown name).
func serveIndex(providers map[store.ID][]string, names map[string]store.ID) func(http.ResponseWriter, *http.Request, []byte) {
	return func(w http.ResponseWriter, r *http.Request, _ []byte) {
		w.Header().Set("Content-Type", "application/json")
		if raw, ok := strings.CutPrefix(r.URL.Path, "/providers/"); ok {
			id, err := store.ParseID(raw)
			if err != nil {
				status(http.StatusBadRequest, "bad_request")(w, r, nil)
				return
			}
			list := indexapi.ProviderList{B3: id.String(), Providers: []indexapi.ProviderInfo{}}
			for i, addr := range providers[id] {
				list.Providers = append(list.Providers, indexapi.ProviderInfo{Node: "node-" + string(rune('a'+i)),
					Addr: addr, Type: "storage", ExpiresInS: 60})
			}
			_ = json.NewEncoder(w).Encode(list)
			return
		}
		key := strings.TrimPrefix(r.URL.Path, "/resolve/")
		id, ok := names[key]
		if !ok {
			status(http.StatusNotFound, "not_found")(w, r, nil)
			return
		}
		_ = json.NewEncoder(w).Encode(indexapi.ResolveAnswer{Key: key, Target: id.String(), Kind: "blob",
			Providers: []indexapi.ProviderInfo{}, Source: "local"})
	}
}

// gzipOf is b gzip-compressed.
func gzipOf(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// brotliOf is b brotli-compressed.
func brotliOf(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	bw := brotli.NewWriter(&buf)
	if _, err := bw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := bw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
