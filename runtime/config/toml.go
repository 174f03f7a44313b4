package config

import (
	"strings"
)

// TOML renders cfg as a TOML document, top-level keys first, then one table
// per section, each key preceded by its help text as a comment. With redact,
// secrets that are set print as "<redacted>".
func TOML(cfg any, redact bool) string {
	var top, sections strings.Builder
	current := ""
	for _, f := range Fields(cfg) {
		section, key := splitKey(f.Key)
		w := &top
		if section != "" {
			w = &sections
			if section != current {
				sections.WriteString("\n[" + section + "]\n")
				current = section
			}
		}
		if f.Help != "" {
			w.WriteString("# " + f.Help + "\n")
		}
		val := f.TOML()
		if redact && f.Secret && !f.Value.IsZero() {
			val = `"<redacted>"`
		}
		w.WriteString(key + " = " + val + "\n")
	}
	return top.String() + sections.String()
}

func splitKey(key string) (section, name string) {
	i := strings.LastIndexByte(key, '.')
	if i < 0 {
		return "", key
	}
	return key[:i], key[i+1:]
}
