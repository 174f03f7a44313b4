package descriptor

import "strconv"

// walkLimits checks a canonical JSON value found at depth base−1 (so a
// container value sits at depth base): containers nest at most MaxDepth
// deep and every number lies within ±MaxSafeInt. Both failures are
// bad_request at l. raw must be valid JSON (canonical input is); the scan
// only tracks brackets and number tokens outside strings.
func walkLimits(l loc, raw []byte, base int) error {
	depth := base - 1
	for i := 0; i < len(raw); i++ {
		switch c := raw[i]; {
		case c == '"':
			i = skipString(raw, i)
		case c == '{' || c == '[':
			if depth++; depth > MaxDepth {
				return badRequest(l, ReasonNesting, "nesting deeper than %d", MaxDepth)
			}
		case c == '}' || c == ']':
			depth--
		case c == '-' || (c >= '0' && c <= '9'):
			j := numberEnd(raw, i)
			if err := checkNumber(l, string(raw[i:j])); err != nil {
				return err
			}
			i = j - 1
		}
	}
	return nil
}

// skipString returns the index of the closing quote of the string that
// opens at raw[i].
func skipString(raw []byte, i int) int {
	for i++; i < len(raw); i++ {
		switch raw[i] {
		case '\\':
			i++
		case '"':
			return i
		}
	}
	return len(raw)
}

// numberEnd returns the index just past the number token starting at i.
func numberEnd(raw []byte, i int) int {
	for i < len(raw) {
		switch c := raw[i]; {
		case c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E' || (c >= '0' && c <= '9'):
			i++
		default:
			return i
		}
	}
	return i
}

// checkNumber requires a JSON number to lie within ±MaxSafeInt.
func checkNumber(l loc, s string) error {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f > MaxSafeInt || f < -MaxSafeInt {
		return badRequest(l, ReasonIntegerRange, "number %s is outside ±(2^53−1)", clip(s))
	}
	return nil
}
