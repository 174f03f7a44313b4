// Package jsontok holds the small helpers of ron's strict token-stream JSON
// readers (store/manifest): reading the next token with a
// uniform error, and naming a token's JSON type in messages.
package jsontok

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// Next returns dec's next token. A premature end of input and a syntax
// error come back as an error whose text says which (the caller wraps it
// with its own sentinel and location).
func Next(dec *json.Decoder) (json.Token, error) {
	t, err := dec.Token()
	switch {
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return nil, errors.New("unexpected end of input")
	case err != nil:
		return nil, fmt.Errorf("bad JSON: %v", err)
	}
	return t, nil
}

// Kind names the JSON type of a value token for error messages ("an
// array", "an object", "a string", "a number", "a boolean", "null").
func Kind(t json.Token) string {
	switch v := t.(type) {
	case json.Delim:
		if v == '[' {
			return "an array"
		}
		return "an object"
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case bool:
		return "a boolean"
	}
	return "null"
}
