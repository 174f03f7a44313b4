package edgecache

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/ronhq/ron/roles/edge/httpcache"
)

// The meta.db records, JSON-encoded with explicit field names so the format
// does not follow renames in httpcache.

type objectRecord struct {
	Size        int64     `json:"size"`
	ContentType string    `json:"content_type"`
	Access      time.Time `json:"access"`
}

type assetRecord struct {
	Key    string       `json:"key"`
	Blob   string       `json:"blob"` // 64 hex
	Access time.Time    `json:"access"`
	Stored storedRecord `json:"stored"`
}

type storedRecord struct {
	Status       int              `json:"status"`
	Header       http.Header      `json:"header"` // repeated lines kept in order
	BodyLen      int64            `json:"body_len"`
	RequestTime  time.Time        `json:"request_time"`
	ResponseTime time.Time        `json:"response_time"`
	Selecting    []selectedRecord `json:"selecting,omitempty"`
	Invalidated  bool             `json:"invalidated,omitempty"`
}

type selectedRecord struct {
	Name    string   `json:"name"`
	Value   string   `json:"value"`
	Raw     []string `json:"raw,omitempty"`
	Present bool     `json:"present"`
}

// encodeStored and decodeStored convert a stored response to and from its
// record; decodeStored(encodeStored(s)) equals s.
func encodeStored(s *httpcache.Stored) storedRecord {
	r := storedRecord{
		Status: s.Status, Header: s.Header, BodyLen: s.BodyLen,
		RequestTime: s.RequestTime, ResponseTime: s.ResponseTime,
		Invalidated: s.Invalidated,
	}
	for _, sel := range s.Selecting {
		r.Selecting = append(r.Selecting, selectedRecord(sel))
	}
	return r
}

func decodeStored(r storedRecord) *httpcache.Stored {
	s := &httpcache.Stored{
		Status: r.Status, Header: r.Header, BodyLen: r.BodyLen,
		RequestTime: r.RequestTime, ResponseTime: r.ResponseTime,
		Invalidated: r.Invalidated,
	}
	if s.Header == nil {
		s.Header = http.Header{}
	}
	for _, sel := range r.Selecting {
		s.Selecting = append(s.Selecting, httpcache.Selected(sel))
	}
	return s
}

// marshalStored encodes a stored response in the meta.db format (JSON).
func marshalStored(s *httpcache.Stored) ([]byte, error) { return json.Marshal(encodeStored(s)) }

// unmarshalStored decodes what marshalStored produced.
func unmarshalStored(b []byte) (*httpcache.Stored, error) {
	var r storedRecord
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, err
	}
	return decodeStored(r), nil
}
