package indexapi

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/ronhq/ron/httpx"
)

// ErrInvalid is wrapped by every validation failure (bad name, version,
// id, provider field); *InvalidError adds the record index and field. The
// index answers it with 400 bad_request (InvalidInput, BatchError). Its
// text is the persistence model's, "indexdb: invalid input", which the
// envelope's message drops.
var ErrInvalid = errors.New("indexdb: invalid input")

// InvalidError is a validation failure inside a provider batch: Index is the
// record's position (-1 for the batch itself), Field its JSON field name.
type InvalidError struct {
	Index int
	Field string
	Msg   string
}

func (e *InvalidError) Error() string {
	if e.Index < 0 {
		return "indexdb: invalid input: " + e.Msg
	}
	return fmt.Sprintf("indexdb: invalid input: records[%d].%s: %s", e.Index, e.Field, e.Msg)
}

// Unwrap makes every *InvalidError match ErrInvalid.
func (e *InvalidError) Unwrap() error { return ErrInvalid }

// Invalidf returns a validation failure: ErrInvalid wrapped with a message.
func Invalidf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
}

// BadRequest is a 400 bad_request envelope.
func BadRequest(format string, args ...any) *httpx.Error {
	return httpx.NewError(http.StatusBadRequest, httpx.CodeBadRequest, format, args...)
}

// InvalidInput is the 400 bad_request envelope of err, a validation failure
// (one matching ErrInvalid): its message is err's without the
// "indexdb: invalid input: " prefix.
func InvalidInput(err error) *httpx.Error {
	return BadRequest("%s", InvalidMessage(err))
}

// BatchError is the envelope of a provider batch failure (docs/index.md
// §4): an undecodable body (the envelope itself, ie.Index -1, while
// decoding) is 400 malformed; a bad record or batch size is 400
// bad_request with details.index (the record's position; absent for the
// batch as a whole) and details.field.
func BatchError(ie *InvalidError, decoding bool) *httpx.Error {
	details := map[string]any{}
	if ie.Field != "" {
		details["field"] = ie.Field
	}
	if ie.Index >= 0 {
		details["index"] = ie.Index
	}
	code := httpx.CodeBadRequest
	if decoding && ie.Index < 0 {
		code = httpx.CodeMalformed
	}
	return httpx.NewError(http.StatusBadRequest, code, "%s", InvalidMessage(ie)).WithDetails(details)
}

// InvalidMessage is the message of err, a validation failure, without the
// "indexdb: invalid input: " prefix that ErrInvalid gives it.
func InvalidMessage(err error) string {
	const p = "indexdb: invalid input: "
	if s := err.Error(); len(s) > len(p) && s[:len(p)] == p {
		return s[len(p):]
	}
	return err.Error()
}
