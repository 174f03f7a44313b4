// Package tooltest lets tests that need an outside tool (b3sum, node, npm
// modules, Tessera's fsck) skip on a developer machine without it, but fail
// where the test script has installed every tool: scripts/test.sh sets
// RON_REQUIRE_TOOLS=1, so a broken install can never turn into a silent skip.
package tooltest

import (
	"fmt"
	"os"
	"testing"
)

// Missing reports that a needed tool is absent: t.Fatal when
// RON_REQUIRE_TOOLS is set, else t.Skip with the message.
func Missing(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if os.Getenv("RON_REQUIRE_TOOLS") != "" {
		t.Fatal("required tool missing (RON_REQUIRE_TOOLS is set): " + msg)
	}
	t.Skip(msg)
}
