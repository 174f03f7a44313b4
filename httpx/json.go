package httpx

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
)

// ReadBody reads a whole (capped, decode-guarded) request body, mapping cap
// and decode failures to their envelope errors.
func ReadBody(r *http.Request) ([]byte, error) {
	if r.Body == nil {
		return nil, nil
	}
	b, err := io.ReadAll(r.Body)
	if err != nil {
		var he *Error
		if errors.As(err, &he) {
			return nil, he
		}
		return nil, fromEcho(err)
	}
	return b, nil
}

// RequireJSON answers 415 unsupported_media_type unless the request's
// Content-Type is application/json (parameters such as charset allowed).
func RequireJSON(r *http.Request) error {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "application/json" {
		return NewError(http.StatusUnsupportedMediaType, CodeUnsupportedMedia, "Content-Type must be application/json")
	}
	return nil
}

// ReadStrictJSON reads the request body (ReadBody) and decodes it into v
// (DecodeStrictJSON).
func ReadStrictJSON(r *http.Request, v any) error {
	body, err := ReadBody(r)
	if err != nil {
		return err
	}
	return DecodeStrictJSON(body, v)
}

// DecodeStrictJSON decodes exactly one JSON value into v, rejecting unknown
// fields and trailing data: any failure is 400 malformed.
func DecodeStrictJSON(body []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return NewError(http.StatusBadRequest, CodeMalformed, "invalid JSON body: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return NewError(http.StatusBadRequest, CodeMalformed, "invalid JSON body: trailing data")
	}
	return nil
}
