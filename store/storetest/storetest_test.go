package storetest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/ronhq/ron/internal/fixtures"
	"github.com/ronhq/ron/store"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestHelpers(t *testing.T) {
	if _, err := os.Stat(filepath.Join(fixtures.Dir(t), "blake3", "test_vectors.json")); err != nil {
		t.Fatal(err)
	}
	p := Pattern(502)
	if p[250] != 250 || p[251] != 0 || p[501] != 250 {
		t.Fatal("Pattern")
	}
	if got := ExpectedOutboard(Pattern(102400)); len(got) != 8+64 || got[0] != 0 || got[1] != 0x90 || got[2] != 1 {
		t.Fatalf("ExpectedOutboard = %x, want the 102,400-byte header and one parent", got)
	}
	if len(ExpectedOutboard(nil)) != 8 || len(OfficialVectors(t)) < 30 {
		t.Fatal("vectors")
	}
	_ = store.ChunkSize
}
