package regstore

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/roles/registry/registryapi/descriptor"
)

// maxTrustRootsFile bounds how much of a trust-roots file is read.
const maxTrustRootsFile = 1 << 20

// LoadTrustRoots reads and checks the trust-roots file (pinned when pin is
// set). Errors name the config key.
func LoadTrustRoots(path, pin string) (descriptor.TrustRoots, error) {
	raw, err := readSmallFile(path, maxTrustRootsFile)
	if err != nil {
		return descriptor.TrustRoots{}, fmt.Errorf("registry.trust_roots: %w", err)
	}
	tr, err := descriptor.ParseTrustRoots(raw, pin)
	if err != nil {
		key := "trust_roots"
		if reasonOf(err) == descriptor.ReasonPinMismatch {
			key = "trust_roots_b3"
		}
		return descriptor.TrustRoots{}, fmt.Errorf("registry.%s: %s: %w", key, path, err)
	}
	return tr, nil
}

// reasonOf returns details.reason of a descriptor (*httpx.Error) error, or
// "" when it has none.
func reasonOf(err error) string {
	var he *httpx.Error
	if !errors.As(err, &he) {
		return ""
	}
	r, _ := he.Details["reason"].(string)
	return r
}

// readSmallFile reads at most limit bytes of path; a larger file is an
// error.
func readSmallFile(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s is larger than %d bytes", path, limit)
	}
	return b, nil
}
