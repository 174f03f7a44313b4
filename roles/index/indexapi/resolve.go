package indexapi

import (
	"strings"

	"github.com/ronhq/ron/store"
)

// Resolve sources (docs/index.md §5): the values of ResolveAnswer.Source.
const (
	SourceLocal = "local"
	SourceCache = "cache"
	SourcePeer  = "peer"
)

// ResolveAnswer answers GET /resolve/{key}.
type ResolveAnswer struct {
	Key         string         `json:"key"`
	Target      string         `json:"target"`
	Kind        string         `json:"kind"`
	NameVersion *uint64        `json:"name_version,omitempty"`
	Providers   []ProviderInfo `json:"providers"`
	Source      string         `json:"source"`
	Partial     bool           `json:"partial,omitempty"`
}

// ParseResolveKey applies the key syntax of GET /resolve/{key}: a b3 id
// (returned as id, with isID set), name@version or a name; anything else
// is 400 bad_request.
func ParseResolveKey(key string) (id store.ID, isID bool, err error) {
	switch {
	case strings.HasPrefix(key, "b3:"):
		if id, err = store.ParseID(key); err != nil {
			return store.ID{}, false, BadRequest("object id must be b3: followed by 64 lowercase hex digits")
		}
		return id, true, nil
	case strings.Contains(key, "@"):
		if _, _, err := ParseNameVersion(key); err != nil {
			return store.ID{}, false, InvalidInput(err)
		}
	default:
		if err := CheckName(key); err != nil {
			return store.ID{}, false, err
		}
	}
	return store.ID{}, false, nil
}
