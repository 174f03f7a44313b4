package tooltest

import (
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// recorder is a testing.TB that records whether Missing failed or skipped.
type recorder struct {
	testing.TB
	failed, skipped bool
}

func (r *recorder) Helper()      {}
func (r *recorder) Fatal(...any) { r.failed = true }
func (r *recorder) Skip(...any)  { r.skipped = true }

func TestMissing(t *testing.T) {
	t.Setenv("RON_REQUIRE_TOOLS", "")
	r := &recorder{TB: t}
	Missing(r, "no %s", "b3sum")
	if !r.skipped || r.failed {
		t.Fatalf("without RON_REQUIRE_TOOLS: skipped %v failed %v", r.skipped, r.failed)
	}
	t.Setenv("RON_REQUIRE_TOOLS", "1")
	r = &recorder{TB: t}
	Missing(r, "no %s", "b3sum")
	if !r.failed {
		t.Fatal("with RON_REQUIRE_TOOLS a missing tool must fail")
	}
}
