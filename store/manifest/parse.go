package manifest

import (
	"bytes"
	"encoding/json"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ronhq/ron/internal/jsontok"

	"github.com/ronhq/ron/store"
)

// Parse decodes b as a ManifestV1 following the reader rules of docs/index.md §2.
//
// Accepted: one JSON object of at most MaxBytes, with any whitespace and key
// order, holding "version" (the number 1, written exactly as 1), "entries"
// (an object, possibly empty, of path → entry) and optionally "meta" (an
// object of strings; missing means empty). An entry holds "id" (canonical
// "b3:" + 64 lowercase hex), "size" (digits only, 0…MaxSize) and optionally
// "type" (missing means GuessType(path)).
//
// Rejected, with an error wrapping ErrInvalid that names the field: invalid
// UTF-8 or unpaired surrogate escapes anywhere, unknown fields, duplicate
// keys (after unescaping) in any object, wrong JSON types, null values,
// trailing data, sizes that are negative, fractional or written with an
// exponent, types outside 1–255 bytes of printable ASCII or refused by
// mime.ParseMediaType, paths breaking the path rules (1–1024 bytes; segments
// of 1–255 bytes joined by '/'; no empty, "." or ".." segment, hence no
// leading or trailing '/'; no '\', U+0000–U+001F or U+007F), a path that is
// also a directory of another path ("a" next to "a/b"; writers never produce
// one), and meta beyond its limits (MaxMetaKeys keys, keys of 1–128 bytes,
// values of at most 4096 bytes). Paths are case-sensitive and compared
// without Unicode normalization.
//
// The returned maps are never nil.
func Parse(b []byte) (ManifestV1, error) {
	if len(b) > MaxBytes {
		return ManifestV1{}, invalidf("manifest", "%d bytes exceed %d", len(b), MaxBytes)
	}
	if !utf8.Valid(b) {
		return ManifestV1{}, invalidf("manifest", "not valid UTF-8")
	}
	if err := checkSurrogates(b); err != nil {
		return ManifestV1{}, err
	}
	p := &parser{dec: json.NewDecoder(bytes.NewReader(b))}
	p.dec.UseNumber()
	m, err := p.manifest()
	if err != nil {
		return ManifestV1{}, err
	}
	if err := checkPrefixes(slices.SortedFunc(maps.Keys(m.Entries), cmpTree)); err != nil {
		return ManifestV1{}, err
	}
	return m, nil
}

// parser walks the json.Decoder token stream, which (unlike Unmarshal) lets
// it see every key and so reject duplicates.
type parser struct {
	dec *json.Decoder
}

func (p *parser) manifest() (ManifestV1, error) {
	m := ManifestV1{Entries: map[string]Entry{}, Meta: map[string]string{}}
	var hasVersion, hasEntries bool
	err := p.object("manifest", func(k string) error {
		switch k {
		case "version":
			hasVersion = true
			return p.version()
		case "entries":
			hasEntries = true
			return p.entries(m.Entries)
		case "meta":
			return p.meta(m.Meta)
		}
		return invalidf("manifest", "unknown field %s", clip(k))
	})
	switch {
	case err != nil:
		return ManifestV1{}, err
	case !hasVersion:
		return ManifestV1{}, invalidf("version", "missing")
	case !hasEntries:
		return ManifestV1{}, invalidf("entries", "missing")
	}
	return m, p.end()
}

// end requires that nothing but whitespace follows the top-level object.
func (p *parser) end() error {
	if _, err := p.dec.Token(); err != io.EOF {
		return invalidf("manifest", "trailing data after the top-level object")
	}
	return nil
}

func (p *parser) version() error {
	t, err := p.next("version")
	if err != nil {
		return err
	}
	n, ok := t.(json.Number)
	if !ok {
		return invalidf("version", "want the number 1, got %s", kind(t))
	}
	if n != "1" {
		return invalidf("version", "unsupported version %s (want 1)", clip(string(n)))
	}
	return nil
}

func (p *parser) entries(into map[string]Entry) error {
	return p.object("entries", func(path string) error {
		if err := checkPath(path); err != nil {
			return err
		}
		e, err := p.entry(path)
		if err != nil {
			return err
		}
		into[path] = e
		return nil
	})
}

func (p *parser) entry(path string) (Entry, error) {
	w := entryWhere(path)
	var e Entry
	var hasID, hasSize bool
	err := p.object(w, func(k string) error {
		switch k {
		case "id":
			hasID = true
			return p.id(w+".id", &e.ID)
		case "size":
			hasSize = true
			return p.size(w+".size", &e.Size)
		case "type":
			return p.typ(w+".type", &e.Type)
		}
		return invalidf(w, "unknown field %s", clip(k))
	})
	switch {
	case err != nil:
		return Entry{}, err
	case !hasID:
		return Entry{}, invalidf(w+".id", "missing")
	case !hasSize:
		return Entry{}, invalidf(w+".size", "missing")
	}
	if e.Type == "" {
		e.Type = GuessType(path)
	}
	return e, nil
}

func (p *parser) id(w string, into *store.ID) error {
	s, err := p.str(w)
	if err != nil {
		return err
	}
	id, err := store.ParseID(s)
	if err != nil {
		return invalidf(w, "%s is not a canonical id (want \"b3:\" and 64 lowercase hex digits)", clip(s))
	}
	*into = id
	return nil
}

func (p *parser) size(w string, into *int64) error {
	t, err := p.next(w)
	if err != nil {
		return err
	}
	n, ok := t.(json.Number)
	if !ok {
		return invalidf(w, "want an integer, got %s", kind(t))
	}
	s := string(n)
	switch {
	case strings.HasPrefix(s, "-"):
		return invalidf(w, "negative size %s", clip(s))
	case strings.ContainsAny(s, ".eE"):
		return invalidf(w, "size %s is not an integer (digits only)", clip(s))
	}
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil || v > MaxSize {
		return invalidf(w, "size %s exceeds 2^53-1", clip(s))
	}
	*into = int64(v)
	return nil
}

func (p *parser) typ(w string, into *string) error {
	s, err := p.str(w)
	if err != nil {
		return err
	}
	if err := checkType(s); err != nil {
		return invalidf(w, "%v", err)
	}
	*into = s
	return nil
}

func (p *parser) meta(into map[string]string) error {
	return p.object("meta", func(k string) error {
		if len(into) == MaxMetaKeys {
			return invalidf("meta", "more than %d keys", MaxMetaKeys)
		}
		v, err := p.str("meta[" + clip(k) + "]")
		if err != nil {
			return err
		}
		if err := checkMetaPair(k, v); err != nil {
			return err
		}
		into[k] = v
		return nil
	})
}

// object reads one JSON object at where, calling member for each key with
// the decoder positioned at the key's value; member must consume the value.
// A key seen twice (compared after unescaping) is an error.
func (p *parser) object(where string, member func(key string) error) error {
	t, err := p.next(where)
	if err != nil {
		return err
	}
	if t != json.Delim('{') {
		return invalidf(where, "want an object, got %s", kind(t))
	}
	seen := map[string]struct{}{}
	for p.dec.More() {
		t, err := p.next(where)
		if err != nil {
			return err
		}
		key, _ := t.(string) // the decoder only yields strings in key position
		if _, dup := seen[key]; dup {
			return invalidf(where, "duplicate key %s", clip(key))
		}
		seen[key] = struct{}{}
		if err := member(key); err != nil {
			return err
		}
	}
	_, err = p.next(where) // the closing '}'; a mismatch is a syntax error
	return err
}

// str reads one JSON string at where.
func (p *parser) str(where string) (string, error) {
	t, err := p.next(where)
	if err != nil {
		return "", err
	}
	s, ok := t.(string)
	if !ok {
		return "", invalidf(where, "want a string, got %s", kind(t))
	}
	return s, nil
}

// next returns the next token; a premature end and syntax errors are
// invalid input.
func (p *parser) next(where string) (json.Token, error) {
	t, err := jsontok.Next(p.dec)
	if err != nil {
		return nil, invalidf(where, "%v", err)
	}
	return t, nil
}

// kind names the JSON type of a value token for error messages.
func kind(t json.Token) string { return jsontok.Kind(t) }

// checkSurrogates rejects \u escapes that encode an unpaired UTF-16
// surrogate, which encoding/json would silently turn into U+FFFD (so that
// two different inputs would decode to the same path). b is valid UTF-8;
// other syntax errors are left to the decoder.
func checkSurrogates(b []byte) error {
	in := false
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case !in:
			in = c == '"'
		case c == '"':
			in = false
		case c == '\\':
			if i+1 < len(b) && b[i+1] == 'u' {
				n, err := surrogateEscape(b, i)
				if err != nil {
					return err
				}
				i += n - 1
				continue
			}
			i++ // skip the escaped character
		}
	}
	return nil
}

// surrogateEscape inspects the \u escape at b[i:] and returns how many bytes
// to skip (6, or 12 for a valid surrogate pair).
func surrogateEscape(b []byte, i int) (int, error) {
	r, ok := hex4(b, i+2)
	switch {
	case !ok || r < 0xd800 || r > 0xdfff:
		return 6, nil
	case r >= 0xdc00:
		return 0, invalidf("manifest", "unpaired low surrogate escape at offset %d", i)
	}
	if i+7 < len(b) && b[i+6] == '\\' && b[i+7] == 'u' {
		if lo, ok := hex4(b, i+8); ok && lo >= 0xdc00 && lo <= 0xdfff {
			return 12, nil
		}
	}
	return 0, invalidf("manifest", "unpaired high surrogate escape at offset %d", i)
}

func hex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	v, err := strconv.ParseUint(string(b[i:i+4]), 16, 16)
	return rune(v), err == nil
}
