package httpcache

import "strings"

// number parses an Integer (at most 15 digits) or a Decimal (at most 12
// integer and 1–3 fraction digits), RFC 8941 §4.2.4.
func (p *sfParser) number() (sfValue, error) {
	start := p.i
	neg := p.peek() == '-'
	if neg {
		p.i++
	}
	if c := p.peek(); c < '0' || c > '9' {
		return sfValue{}, errSF
	}
	var n int64
	digits, dot := 0, -1
	for !p.done() {
		c := p.s[p.i]
		if c == '.' && dot < 0 {
			if digits > 12 {
				return sfValue{}, errSF
			}
			dot = digits
			p.i++
			continue
		}
		if c < '0' || c > '9' {
			break
		}
		digits++
		if dot < 0 {
			n = n*10 + int64(c-'0')
		}
		if (dot < 0 && digits > 15) || (dot >= 0 && digits-dot > 3) {
			return sfValue{}, errSF
		}
		p.i++
	}
	if dot >= 0 {
		if digits == dot {
			return sfValue{}, errSF // "1." has no fraction digit
		}
		return sfValue{kind: sfDecimal, text: p.s[start:p.i]}, nil
	}
	if neg {
		n = -n
	}
	return sfValue{kind: sfInteger, text: p.s[start:p.i], num: n}, nil
}

// str parses a String: printable ASCII, escapes only for `"` and `\`.
func (p *sfParser) str() (sfValue, error) {
	p.i++ // opening quote
	var b strings.Builder
	for !p.done() {
		c := p.s[p.i]
		p.i++
		switch {
		case c == '\\':
			if p.done() {
				return sfValue{}, errSF
			}
			next := p.s[p.i]
			if next != '"' && next != '\\' {
				return sfValue{}, errSF
			}
			b.WriteByte(next)
			p.i++
		case c == '"':
			return sfValue{kind: sfString, text: b.String()}, nil
		case c < 0x20 || c > 0x7e:
			return sfValue{}, errSF
		default:
			b.WriteByte(c)
		}
	}
	return sfValue{}, errSF
}

// token parses a Token: `( ALPHA / "*" ) *( tchar / ":" / "/" )`.
func (p *sfParser) token() sfValue {
	start := p.i
	p.i++
	for !p.done() && (isTchar(p.s[p.i]) || p.s[p.i] == ':' || p.s[p.i] == '/') {
		p.i++
	}
	return sfValue{kind: sfToken, text: p.s[start:p.i]}
}

// bytes parses a Byte Sequence `":" *base64 ":"`.
func (p *sfParser) bytes() (sfValue, error) {
	p.i++
	start := p.i
	for !p.done() {
		c := p.s[p.i]
		if c == ':' {
			p.i++
			return sfValue{kind: sfBytes, text: p.s[start : p.i-1]}, nil
		}
		isB64 := (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' || c == '/' || c == '='
		if !isB64 {
			return sfValue{}, errSF
		}
		p.i++
	}
	return sfValue{}, errSF
}

// boolean parses `"?" ( "0" / "1" )`.
func (p *sfParser) boolean() (sfValue, error) {
	p.i++
	switch p.peek() {
	case '0', '1':
		v := sfValue{kind: sfBoolean, flag: p.peek() == '1'}
		p.i++
		return v, nil
	}
	return sfValue{}, errSF
}
