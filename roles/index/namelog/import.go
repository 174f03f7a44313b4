package namelog

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/ronhq/ron/roles/index/indexdb"
)

// MaxImportBytes bounds one encoded import entry: at most
// indexdb.MaxReplicaBatch records of at most a few hundred bytes each.
const MaxImportBytes = 1 << 20

// opImport is the op of an import entry.
const opImport = "import"

// Import is an import entry: names a node held before it joined the
// control plane (docs/cluster.md §14), applied with the supersede rule
// (indexdb.ApplyImport) and the history length Keep the leader chose.
type Import struct {
	Records []indexdb.Record
	Keep    int
}

// importCommand is the log encoding of an Import.
type importCommand struct {
	Op      string           `json:"op"`
	Keep    int              `json:"keep"`
	Records []indexdb.Record `json:"records"`
}

// EncodeImport returns imp as a log entry.
func EncodeImport(imp Import) ([]byte, error) {
	b, err := json.Marshal(importCommand{Op: opImport, Keep: imp.Keep, Records: imp.Records})
	if err != nil {
		return nil, err
	}
	if len(b) > MaxImportBytes {
		return nil, fmt.Errorf("namelog: import entry of %d bytes, above %d", len(b), MaxImportBytes)
	}
	return b, nil
}

// DecodeImport parses an entry EncodeImport wrote. It is strict: unknown
// fields, another op, or records that indexdb.DecodeReplicaNames refuses
// (1–1000 valid records) are errors.
func DecodeImport(b []byte) (Import, error) {
	if len(b) > MaxImportBytes {
		return Import{}, fmt.Errorf("namelog: import entry of %d bytes, above %d", len(b), MaxImportBytes)
	}
	var c struct {
		Op      string          `json:"op"`
		Keep    int             `json:"keep"`
		Records json.RawMessage `json:"records"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return Import{}, fmt.Errorf("namelog: import entry: %w", err)
	}
	if dec.More() {
		return Import{}, fmt.Errorf("namelog: import entry: data after the object")
	}
	if c.Op != opImport {
		return Import{}, fmt.Errorf("namelog: import entry: op %q", c.Op)
	}
	recs, err := indexdb.DecodeReplicaNames(append(append([]byte(`{"records":`), c.Records...), '}'))
	if err != nil {
		return Import{}, fmt.Errorf("namelog: import entry: %w", err)
	}
	return Import{Records: recs, Keep: c.Keep}, nil
}

// isImport reports whether entry b claims to be an import (its op field);
// the strict decoders check the rest.
func isImport(b []byte) bool {
	var peek struct {
		Op string `json:"op"`
	}
	return json.Unmarshal(b, &peek) == nil && peek.Op == opImport
}
