package sites

import (
	"encoding/json"
	"strings"
	"testing"
)

func decodeListing(t *testing.T, b []byte) Listing {
	t.Helper()
	var l Listing
	if err := json.Unmarshal(b, &l); err != nil {
		t.Fatalf("listing %s: %v", b, err)
	}
	return l
}

func joinNames(names []string) string { return strings.Join(names, ",") }
