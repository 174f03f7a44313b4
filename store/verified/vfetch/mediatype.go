package vfetch

import "mime"

// OctetStream is the Content-Type MediaType gives an unusable value.
const OctetStream = "application/octet-stream"

// maxMediaType is the longest Content-Type kept (storage's limit).
const maxMediaType = 255

// MediaType returns v when it parses as a media type of at most 255 bytes,
// else application/octet-stream.
func MediaType(v string) string {
	if v == "" || len(v) > maxMediaType {
		return OctetStream
	}
	if _, _, err := mime.ParseMediaType(v); err != nil {
		return OctetStream
	}
	return v
}
