package httpcache

import (
	"errors"
	"strings"
)

// sfKind is the type of an RFC 8941 bare item (or an inner list).
type sfKind uint8

const (
	sfInteger sfKind = iota + 1
	sfDecimal
	sfString
	sfToken
	sfBytes
	sfBoolean
	sfInnerList
)

// sfValue is a dictionary member value; parameters are parsed and dropped.
type sfValue struct {
	kind sfKind
	text string // integer/decimal digits, string content, token, base64 text
	num  int64  // integer value
	flag bool   // boolean value
	list []sfValue
}

var errSF = errors.New("invalid structured field")

// sfParser is a cursor over a structured field value (RFC 8941 §4.2).
type sfParser struct {
	s string
	i int
}

func (p *sfParser) done() bool { return p.i >= len(p.s) }

func (p *sfParser) peek() byte {
	if p.done() {
		return 0
	}
	return p.s[p.i]
}

func (p *sfParser) skipSP() {
	for !p.done() && p.s[p.i] == ' ' {
		p.i++
	}
}

func (p *sfParser) skipOWS() {
	for !p.done() && isOWS(p.s[p.i]) {
		p.i++
	}
}

// parseSFDictionary parses the lines of a Dictionary field strictly (RFC 8941
// §4.2: lines combined with ", ", leading and trailing SP discarded, any
// syntax error fails the whole field). Later duplicate keys overwrite earlier
// ones; member order is not kept.
func parseSFDictionary(lines []string) (map[string]sfValue, error) {
	p := &sfParser{s: strings.Trim(strings.Join(lines, ", "), " ")}
	dict := map[string]sfValue{}
	for !p.done() {
		key, err := p.key()
		if err != nil {
			return nil, err
		}
		val := sfValue{kind: sfBoolean, flag: true}
		if p.peek() == '=' {
			p.i++
			if val, err = p.itemOrInnerList(); err != nil {
				return nil, err
			}
		} else if err = p.parameters(); err != nil {
			return nil, err
		}
		dict[key] = val
		p.skipOWS()
		if p.done() {
			return dict, nil
		}
		if p.peek() != ',' {
			return nil, errSF
		}
		p.i++
		p.skipOWS()
		if p.done() {
			return nil, errSF // trailing comma
		}
	}
	return dict, nil
}

// key parses `( lcalpha / "*" ) *( lcalpha / DIGIT / "_" / "-" / "." / "*" )`.
func (p *sfParser) key() (string, error) {
	start := p.i
	if c := p.peek(); !(c >= 'a' && c <= 'z') && c != '*' {
		return "", errSF
	}
	for !p.done() {
		c := p.s[p.i]
		if !(c >= 'a' && c <= 'z') && !(c >= '0' && c <= '9') && strings.IndexByte("_-.*", c) < 0 {
			break
		}
		p.i++
	}
	return p.s[start:p.i], nil
}

func (p *sfParser) itemOrInnerList() (sfValue, error) {
	if p.peek() == '(' {
		return p.innerList()
	}
	v, err := p.bareItem()
	if err != nil {
		return v, err
	}
	return v, p.parameters()
}

func (p *sfParser) innerList() (sfValue, error) {
	p.i++ // "("
	out := sfValue{kind: sfInnerList}
	for !p.done() {
		p.skipSP()
		if p.peek() == ')' {
			p.i++
			return out, p.parameters()
		}
		item, err := p.bareItem()
		if err != nil {
			return out, err
		}
		if err := p.parameters(); err != nil {
			return out, err
		}
		out.list = append(out.list, item)
		if c := p.peek(); c != ' ' && c != ')' {
			return out, errSF
		}
	}
	return out, errSF
}

// parameters parses and discards `*( ";" *SP key [ "=" bare-item ] )`.
func (p *sfParser) parameters() error {
	for p.peek() == ';' {
		p.i++
		p.skipSP()
		if _, err := p.key(); err != nil {
			return err
		}
		if p.peek() == '=' {
			p.i++
			if _, err := p.bareItem(); err != nil {
				return err
			}
		}
	}
	return nil
}

func (p *sfParser) bareItem() (sfValue, error) {
	switch c := p.peek(); {
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	case c == '"':
		return p.str()
	case c == '*' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'):
		return p.token(), nil
	case c == ':':
		return p.bytes()
	case c == '?':
		return p.boolean()
	}
	return sfValue{}, errSF
}
