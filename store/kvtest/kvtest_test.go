package kvtest_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/ronhq/ron/store/kv"
	"github.com/ronhq/ron/store/kv/memkv"
	"github.com/ronhq/ron/store/kvtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestRunMemory runs the suite against the reference memory engine so the
// suite itself is exercised in its own package.
func TestRunMemory(t *testing.T) {
	kvtest.Run(t, func(*testing.T) kv.DB { return memkv.New() })
}
