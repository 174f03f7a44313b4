// Package config loads ron's configuration: built-in defaults < TOML file <
// RON_* environment < command-line flags that were set, with unknown keys
// rejected (docs/architecture.md §4). It is generic over the root config struct: keys
// are the `koanf` struct tags, joined with dots.
package config

import (
	"fmt"
	"strconv"
	"strings"
)

// Size is a byte count written as plain bytes or as a number with a KiB, MiB or
// GiB suffix ("8GiB", "64MiB", "4096").
type Size int64

var sizeUnits = []struct {
	suffix string
	mult   int64
}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"B", 1}}

// ParseSize parses a size. Negative values, fractions and unknown suffixes are errors.
func ParseSize(s string) (Size, error) {
	t := strings.TrimSpace(s)
	mult := int64(1)
	for _, u := range sizeUnits {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("invalid size %q: want bytes or a number with KiB, MiB or GiB", s)
	}
	if n > (1<<63-1)/mult {
		return 0, fmt.Errorf("invalid size %q: too large", s)
	}
	return Size(n * mult), nil
}

// String renders the size with the largest unit that divides it exactly.
func (s Size) String() string {
	for _, u := range sizeUnits[:3] {
		if s != 0 && int64(s)%u.mult == 0 {
			return strconv.FormatInt(int64(s)/u.mult, 10) + u.suffix
		}
	}
	return strconv.FormatInt(int64(s), 10)
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (s *Size) UnmarshalText(b []byte) error {
	v, err := ParseSize(string(b))
	if err != nil {
		return err
	}
	*s = v
	return nil
}

// MarshalText implements encoding.TextMarshaler.
func (s Size) MarshalText() ([]byte, error) { return []byte(s.String()), nil }
