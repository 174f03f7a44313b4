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
	if got := ExpectedChunks(Pattern(102400)); len(got) != 2 ||
		got[1].String() != "b3:1b314bec1682449387dbf17690bdd41311bdf21f3062998c1b89a631ac26dae2" {
		t.Fatalf("ExpectedChunks = %v", got)
	}
	if len(ExpectedChunks(nil)) != 0 || len(OfficialVectors(t)) < 30 {
		t.Fatal("vectors")
	}
	_ = store.ChunkSize
}
