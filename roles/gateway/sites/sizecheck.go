package sites

import (
	"net/http"
	"strconv"
	"strings"
)

// sizeWriter watches the status and headers Objects.Serve writes for an
// entry and reports (once) when the object's announced size differs from
// the manifest's: Content-Length of a 200, or the complete length N of a
// single-range 206's "Content-Range: bytes a-b/N". Other answers (304,
// errors, multipart 206) are not compared. The check costs no byte reads.
type sizeWriter struct {
	http.ResponseWriter
	want     int64
	checked  bool
	mismatch func(got int64)
}

// WriteHeader checks the headers, then forwards.
func (w *sizeWriter) WriteHeader(code int) {
	w.check(code)
	w.ResponseWriter.WriteHeader(code)
}

// Write checks the headers (implicit 200) on the first call, then forwards.
func (w *sizeWriter) Write(b []byte) (int, error) {
	w.check(http.StatusOK)
	return w.ResponseWriter.Write(b)
}

// Flush forwards to the underlying writer when it can flush.
func (w *sizeWriter) Flush() {
	w.check(http.StatusOK)
	_ = http.NewResponseController(w.ResponseWriter).Flush()
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *sizeWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *sizeWriter) check(code int) {
	if w.checked || (code >= 100 && code < 200) {
		return
	}
	w.checked = true
	if got, ok := announcedSize(code, w.Header()); ok && got != w.want {
		w.mismatch(got)
	}
}

// announcedSize returns the whole object's size as the headers of a 200 or
// single-range 206 state it.
func announcedSize(code int, h http.Header) (int64, bool) {
	switch code {
	case http.StatusOK:
		n, err := strconv.ParseInt(h.Get("Content-Length"), 10, 64)
		return n, err == nil && n >= 0
	case http.StatusPartialContent:
		cr := h.Get("Content-Range")
		i := strings.LastIndexByte(cr, '/')
		if !strings.HasPrefix(cr, "bytes ") || i < 0 {
			return 0, false
		}
		n, err := strconv.ParseInt(cr[i+1:], 10, 64)
		return n, err == nil && n >= 0
	}
	return 0, false
}
