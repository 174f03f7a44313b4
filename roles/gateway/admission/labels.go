package admission

import "strings"

// Tenant label values (docs/gateway.md §10): listed tenants keep their id.
const (
	// MaxListedLabels is how many listed tenant ids get a label of their own.
	MaxListedLabels = 256
	LabelDefault    = "default" // the tenant of a token without a tenant caveat
	LabelAnon       = "anon"    // every anonymous prefix tenant (anon:…)
	LabelOther      = "other"   // every other tenant
)

// Labeler applies the tenant label rule of docs/gateway.md §10. It is
// immutable: build a new one when the listed tenants change (and swap it
// atomically). A nil *Labeler labels as one built from no ids.
type Labeler struct {
	kept map[string]struct{}
}

// NewLabeler keeps the first MaxListedLabels distinct ids of listed (config
// tenants, then registry tenants), skipping "", "default" (labeled as such
// anyway) and anonymous ids.
func NewLabeler(listed []string) *Labeler {
	l := &Labeler{kept: map[string]struct{}{}}
	for _, id := range listed {
		if len(l.kept) == MaxListedLabels {
			break
		}
		if id == "" || id == LabelDefault || anonymous(id) {
			continue
		}
		l.kept[id] = struct{}{}
	}
	return l
}

// Label returns the tenant label of id: id itself when kept, "default",
// "anon" for any "anon:" id, else "other". A listed tenant whose id is
// "anon" or "other" is thus indistinguishable from those groups.
func (l *Labeler) Label(id string) string {
	switch {
	case id == LabelDefault:
		return LabelDefault
	case anonymous(id):
		return LabelAnon
	}
	if l != nil {
		if _, ok := l.kept[id]; ok {
			return id
		}
	}
	return LabelOther
}

// Len reports how many listed ids are kept.
func (l *Labeler) Len() int {
	if l == nil {
		return 0
	}
	return len(l.kept)
}

func anonymous(id string) bool { return strings.HasPrefix(id, "anon:") }
