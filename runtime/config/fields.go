package config

import (
	"encoding"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"
)

// Field is one leaf key of a config struct.
type Field struct {
	Key    string        // dotted key, e.g. "storage.listen"
	Help   string        // one-line description from the `help` tag
	Secret bool          // `secret:"true"`: redacted when printed
	Value  reflect.Value // the field's value inside the walked struct
}

// Text renders the field's value the way it is written in TOML and flags.
func (f Field) Text() string { return textOf(f.Value) }

// TOML renders the field's value as a TOML literal.
func (f Field) TOML() string {
	v := f.Value
	switch {
	case isText(v):
		return strconv.Quote(textOf(v))
	case isTableList(v):
		return tableListTOML(v)
	case v.Kind() == reflect.Slice:
		parts := make([]string, v.Len())
		for i := range parts {
			parts[i] = strconv.Quote(fmt.Sprint(v.Index(i).Interface()))
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case v.Kind() == reflect.String:
		return strconv.Quote(v.String())
	}
	return textOf(v)
}

// Fields walks a pointer to a config struct and returns its leaf keys in
// declaration order. Nested structs become sections; fields tagged
// `koanf:",squash"` are inlined.
func Fields(cfg any) []Field {
	return walk(reflect.ValueOf(cfg).Elem(), "", nil)
}

// Changed lists, as "section.key", those of keys whose values differ between
// cur and next, two pointers to configs of one type; a reload names them
// when it refuses. A key that cfg does not have is a programming error and
// panics.
func Changed(section string, cur, next any, keys ...string) []string {
	a, b := byKey(Fields(cur)), byKey(Fields(next))
	var out []string
	for _, k := range keys {
		fa, ok := a[k]
		if !ok {
			panic("config.Changed: no key " + k)
		}
		if !reflect.DeepEqual(fa.Value.Interface(), b[k].Value.Interface()) {
			out = append(out, section+"."+k)
		}
	}
	return out
}

func byKey(fs []Field) map[string]Field {
	m := make(map[string]Field, len(fs))
	for _, f := range fs {
		m[f.Key] = f
	}
	return m
}

func walk(v reflect.Value, prefix string, out []Field) []Field {
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		name, squash := tagName(sf)
		if name == "-" || !sf.IsExported() {
			continue
		}
		fv := v.Field(i)
		key := prefix + name
		if fv.Kind() == reflect.Struct && !isText(fv) {
			if squash {
				out = walk(fv, prefix, out)
			} else {
				out = walk(fv, key+".", out)
			}
			continue
		}
		out = append(out, Field{Key: key, Help: sf.Tag.Get("help"), Secret: sf.Tag.Get("secret") == "true", Value: fv})
	}
	return out
}

func tagName(sf reflect.StructField) (string, bool) {
	tag := sf.Tag.Get("koanf")
	name, opts, _ := strings.Cut(tag, ",")
	if name == "" && opts != "squash" {
		name = strings.ToLower(sf.Name)
	}
	return name, opts == "squash"
}

var textMarshaler = reflect.TypeFor[encoding.TextMarshaler]()

func isText(v reflect.Value) bool {
	return v.Type().Implements(textMarshaler) || v.Type() == reflect.TypeFor[time.Duration]()
}

func textOf(v reflect.Value) string {
	if d, ok := v.Interface().(time.Duration); ok {
		return d.String()
	}
	if m, ok := v.Interface().(encoding.TextMarshaler); ok {
		b, _ := m.MarshalText()
		return string(b)
	}
	if v.Kind() == reflect.Slice {
		parts := make([]string, v.Len())
		for i := range parts {
			parts[i] = fmt.Sprint(v.Index(i).Interface())
		}
		return strings.Join(parts, ",")
	}
	return fmt.Sprint(v.Interface())
}

// isTableList reports whether v is a list of structs: an array of tables in
// TOML ([[section.key]]), which has no flag or environment spelling.
func isTableList(v reflect.Value) bool {
	return v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.Struct
}

// tableListTOML renders a list of structs as an array of inline tables,
// leaving out nil pointer fields (keys that take their defaults).
func tableListTOML(v reflect.Value) string {
	rows := make([]string, v.Len())
	for i := range rows {
		var kv []string
		for _, f := range Fields(v.Index(i).Addr().Interface()) {
			fv := f.Value
			if fv.Kind() == reflect.Pointer {
				if fv.IsNil() {
					continue
				}
				fv = fv.Elem()
			}
			kv = append(kv, f.Key+" = "+Field{Value: fv}.TOML())
		}
		rows[i] = "{" + strings.Join(kv, ", ") + "}"
	}
	return "[" + strings.Join(rows, ", ") + "]"
}
