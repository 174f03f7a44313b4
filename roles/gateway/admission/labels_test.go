package admission

import (
	"fmt"
	"testing"
)

func TestLabeler(t *testing.T) {
	l := NewLabeler([]string{"acme", "", "default", "anon:1.2.3.0/24", "acme", "beta"})
	tests := []struct{ id, want string }{
		{"acme", "acme"}, {"beta", "beta"}, {"default", "default"},
		{"anon:203.0.113.0/24", "anon"}, {"anon:2001:db8:1:2::/64", "anon"}, {"anon:1.2.3.0/24", "anon"},
		{"gamma", "other"}, {"", "other"}, {"ACME", "other"},
	}
	for _, tc := range tests {
		if got := l.Label(tc.id); got != tc.want {
			t.Errorf("Label(%q) = %q, want %q", tc.id, got, tc.want)
		}
	}
	if l.Len() != 2 {
		t.Errorf("kept %d ids, want 2", l.Len())
	}
}

func TestLabelerKeepsFirst256(t *testing.T) {
	var ids []string
	for i := range 300 {
		ids = append(ids, fmt.Sprintf("t%03d", i))
		if i%10 == 0 {
			ids = append(ids, "t000", "default", "anon:x") // repeats use no room
		}
	}
	l := NewLabeler(ids)
	if l.Len() != MaxListedLabels {
		t.Fatalf("kept %d", l.Len())
	}
	if l.Label("t255") != "t255" || l.Label("t256") != LabelOther || l.Label("t299") != LabelOther {
		t.Fatalf("t255 %q, t256 %q", l.Label("t255"), l.Label("t256"))
	}
}

func TestNilLabeler(t *testing.T) {
	var l *Labeler
	for id, want := range map[string]string{"acme": "other", "default": "default", "anon:x": "anon"} {
		if got := l.Label(id); got != want {
			t.Errorf("nil Label(%q) = %q", id, got)
		}
	}
	if l.Len() != 0 {
		t.Error("nil Len")
	}
}
