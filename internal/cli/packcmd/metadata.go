package packcmd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
)

// printMetadata writes the metadata object as indented JSON under a
// "metadata:" line.
func printMetadata(w io.Writer, raw json.RawMessage) error {
	var buf bytes.Buffer
	if err := json.Indent(&buf, raw, "  ", "  "); err != nil {
		buf.Reset()
		buf.Write(raw)
	}
	_, err := fmt.Fprintf(w, "metadata:\n  %s\n", buf.Bytes())
	return err
}
