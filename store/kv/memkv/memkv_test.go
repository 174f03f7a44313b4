package memkv_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/ronhq/ron/store/kv"
	"github.com/ronhq/ron/store/kv/memkv"
	"github.com/ronhq/ron/store/kvtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestConformance(t *testing.T) {
	kvtest.Run(t, func(*testing.T) kv.DB { return memkv.New() })
}

func BenchmarkUpdate(b *testing.B) {
	db := memkv.New()
	defer db.Close()
	kvtest.BenchUpdate(b, db)
}

func BenchmarkView(b *testing.B) {
	db := memkv.New()
	defer db.Close()
	kvtest.BenchView(b, db)
}
