package indexapi

import (
	"encoding/json"
	"io"
)

// DecodeProviderAddrs reads a GET /providers/{b3} answer (ProviderList; at
// most limit bytes of it) and returns the providers' addr fields in its
// order. Only the addr fields are decoded: it serves the readers that just
// fetch from the providers (storage repair pulls, `ron get`'s fallback).
func DecodeProviderAddrs(body io.Reader, limit int64) ([]string, error) {
	var list struct {
		Providers []struct {
			Addr string `json:"addr"`
		} `json:"providers"`
	}
	if err := json.NewDecoder(io.LimitReader(body, limit)).Decode(&list); err != nil {
		return nil, err
	}
	out := make([]string, 0, len(list.Providers))
	for _, p := range list.Providers {
		out = append(out, p.Addr)
	}
	return out, nil
}
