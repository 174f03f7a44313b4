package provider

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"time"
)

// errClientTimeout: a write to the client made no progress within Timeout.
var errClientTimeout = fmt.Errorf("%w: no progress within the timeout", errClient)

// clientWriter writes to the client, each write under its own deadline
// (ignored by ResponseWriters without deadline support).
type clientWriter struct {
	w  http.ResponseWriter
	rc *http.ResponseController
	d  time.Duration
}

func newClientWriter(w http.ResponseWriter, d time.Duration) *clientWriter {
	return &clientWriter{w: w, rc: http.NewResponseController(w), d: d}
}

func (cw *clientWriter) write(p []byte) error {
	_ = cw.rc.SetWriteDeadline(time.Now().Add(cw.d))
	if _, err := cw.w.Write(p); err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return errClientTimeout
		}
		return fmt.Errorf("%w: %v", errClient, err)
	}
	return nil
}

// clear removes the write deadline so that it does not outlive the answer
// on a kept-alive connection.
func (cw *clientWriter) clear() { _ = cw.rc.SetWriteDeadline(time.Time{}) }
