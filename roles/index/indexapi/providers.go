package indexapi

import (
	"time"

	"github.com/ronhq/ron/store"
)

// Announcement is one record of a provider batch: node holds object ID at
// Addr. TTL 0 withdraws the (ID, Node) record.
type Announcement struct {
	ID     store.ID
	Node   string
	Addr   string
	Region string
	Type   string
	TTL    time.Duration
}

// AnnounceRecord is one record of the POST /providers body.
type AnnounceRecord struct {
	B3     string `json:"b3"`
	Node   string `json:"node"`
	Addr   string `json:"addr"`
	TTLS   int64  `json:"ttl_s"`
	Region string `json:"region,omitempty"`
	Type   string `json:"type,omitempty"`
}

// AnnounceBody is the POST /providers body (docs/index.md §4) as clients
// send it: {"records":[{"b3","node","addr","ttl_s","region"?,"type"?}]}.
type AnnounceBody struct {
	Records []AnnounceRecord `json:"records"`
}

// NewAnnounceBody is the body announcing recs, every ttl_s explicit (so
// the receiver's default TTL plays no part). TTLs are whole seconds
// (CheckWholeSeconds); a fraction would be dropped.
func NewAnnounceBody(recs []Announcement) AnnounceBody {
	in := AnnounceBody{Records: make([]AnnounceRecord, 0, len(recs))}
	for _, a := range recs {
		in.Records = append(in.Records, AnnounceRecord{B3: a.ID.String(), Node: a.Node, Addr: a.Addr,
			TTLS: int64(a.TTL / time.Second), Region: a.Region, Type: a.Type})
	}
	return in
}

// AnnounceReply answers POST /providers.
type AnnounceReply struct {
	Accepted  int `json:"accepted"`
	Withdrawn int `json:"withdrawn"`
}

// ProviderInfo is one provider on the wire.
type ProviderInfo struct {
	Node       string `json:"node"`
	Addr       string `json:"addr"`
	Region     string `json:"region"`
	Type       string `json:"type"`
	LastSeenS  int64  `json:"last_seen_s"`
	ExpiresInS int64  `json:"expires_in_s"`
}

// ProviderList answers GET /providers/{b3}.
type ProviderList struct {
	B3        string         `json:"b3"`
	Providers []ProviderInfo `json:"providers"`
}

// CheckWholeSeconds rejects a TTL that ttl_s (whole seconds) cannot carry,
// so an in-process batch fails exactly where its JSON form could not be
// written: a 400 bad_request (BatchError) naming the index and field of
// the first such record.
func CheckWholeSeconds(recs []Announcement) error {
	for i, a := range recs {
		if a.TTL%time.Second != 0 {
			return BatchError(&InvalidError{Index: i, Field: "ttl_s", Msg: "not whole seconds"}, false)
		}
	}
	return nil
}
