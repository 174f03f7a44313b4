package vfetch

import (
	"mime"

	"github.com/ronhq/ron/store"
)

// OctetStream is the Content-Type MediaType gives an unusable value.
const OctetStream = "application/octet-stream"

// MediaType returns v when it parses as a media type of at most
// store.MaxContentTypeLen (255) bytes, else application/octet-stream.
func MediaType(v string) string {
	if v == "" || len(v) > store.MaxContentTypeLen {
		return OctetStream
	}
	if _, _, err := mime.ParseMediaType(v); err != nil {
		return OctetStream
	}
	return v
}
