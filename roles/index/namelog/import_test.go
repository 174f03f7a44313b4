package namelog

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ronhq/ron/roles/index/indexdb"
	"github.com/ronhq/ron/runtime/consensus/consensustest"
	"github.com/ronhq/ron/store"
)

// importRecords are two names' records as a node held them before the
// control plane.
func importRecords() []indexdb.Record {
	t1, t2 := store.Sum([]byte("one")), store.Sum([]byte("two"))
	return []indexdb.Record{
		{Name: "old.example", Target: t1, Version: 1, UpdatedAt: at},
		{Name: "old.example", Target: t2, Version: 2, UpdatedAt: at.Add(time.Second)},
		{Name: "gone.example", Version: 4, Deleted: true, UpdatedAt: at},
	}
}

func TestImportRoundTrip(t *testing.T) {
	imp := Import{Records: importRecords(), Keep: 5}
	b, err := EncodeImport(imp)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeImport(b)
	if err != nil || got.Keep != 5 || !slices.Equal(got.Records, imp.Records) || !isImport(b) {
		t.Fatalf("%s decoded to %+v, %v", b, got, err)
	}
	if isImport([]byte(`{"op":"set"}`)) || isImport([]byte(`{`)) {
		t.Fatal("isImport took a write or junk for an import")
	}
}

// TestDecodeImportRefusesMalformedEntries is the table of import entries
// DecodeImport refuses.
func TestDecodeImportRefusesMalformedEntries(t *testing.T) {
	rec := `{"name":"a.example","version":1,"b3":"` + store.Sum([]byte("t")).String() + `","deleted":false,"updated_at":"2030-05-06T07:08:09.123Z"}`
	for _, bad := range []string{
		``, `null`, `{}`, `{"op":"import","keep":1}`, `{"op":"import","keep":1,"records":[]}`,
		`{"op":"set","keep":1,"records":[` + rec + `]}`,
		`{"op":"import","keep":1,"records":[` + rec + `],"extra":1}`,
		`{"op":"import","keep":1,"records":[` + rec + `]} {}`,
		`{"op":"import","keep":1,"records":[` + strings.Replace(rec, `"version":1`, `"version":0`, 1) + `]}`,
		`{"op":"import","keep":1,"records":[` + strings.Replace(rec, `"a.example"`, `"A"`, 1) + `]}`,
		`{"op":"import","keep":1,"records":[` + strings.Replace(rec, `"deleted":false`, `"deleted":true`, 1) + `]}`,
		`{"op":"import","keep":1,"records":[` + strings.Repeat(rec+",", 1000) + rec + `]}`,
	} {
		if imp, err := DecodeImport([]byte(bad)); err == nil {
			t.Errorf("%.80q decoded to %+v", bad, imp)
		}
	}
}

// FuzzDecodeImport: an import entry is outside input too. DecodeImport
// never panics, and what it accepts encodes back to the same import.
func FuzzDecodeImport(f *testing.F) {
	good, _ := EncodeImport(Import{Records: importRecords(), Keep: 3})
	f.Add(good)
	f.Add([]byte(`{"op":"import","keep":1,"records":[{}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		imp, err := DecodeImport(b)
		if err != nil {
			return
		}
		again, err := EncodeImport(imp)
		if err != nil {
			t.Fatalf("accepted import does not encode: %v", err)
		}
		back, err := DecodeImport(again)
		if err != nil || back.Keep != imp.Keep || !slices.Equal(back.Records, imp.Records) {
			t.Fatalf("%s → %+v → %s → %+v, %v", b, imp, again, back, err)
		}
	})
}

// TestImportThroughTheLog: names imported through the leader land on every
// server, merged with what the log wrote by the supersede rule — the same
// on every server: the imported version 2 becomes current over the log's
// version 1, and at version 1 the later record stays.
func TestImportThroughTheLog(t *testing.T) {
	ss := consensustest.NewGroup(t, 3, indexServer)
	l := consensustest.Leader(t, ss)
	ctx := context.Background()
	if _, err := write(ctx, l.Group, indexdb.NameWrite{Name: "old.example", Target: store.Sum([]byte("new")), At: at.Add(-time.Hour), Keep: 10}); err != nil {
		t.Fatal(err)
	}
	b, err := EncodeImport(Import{Records: importRecords(), Keep: 10})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := l.Group.Apply(ctx, b)
	if err != nil || resp.(Result).Err != nil || resp.(Result).Imported != 3 {
		t.Fatalf("import: %+v %v", resp, err)
	}
	for _, s := range ss {
		consensustest.Eventually(t, s.ID+" holds the import", func() bool {
			h, err := dbOf(s).History(ctx, "old.example")
			g, gerr := dbOf(s).History(ctx, "gone.example")
			return err == nil && gerr == nil && len(h) == 2 && h[0].Version == 2 && h[0].Target == store.Sum([]byte("two")) &&
				h[1].Target == store.Sum([]byte("one")) && len(g) == 1 && g[0].Deleted
		})
	}
}
