package iox

import (
	"bytes"
	"errors"
	"testing"
)

// shortWriter accepts at most max bytes a call, then fails.
type shortWriter struct{ max int }

func (s shortWriter) Write(p []byte) (int, error) {
	if len(p) > s.max {
		return s.max, errors.New("short write")
	}
	return len(p), nil
}

func TestCountingWriter(t *testing.T) {
	var b bytes.Buffer
	c := &CountingWriter{W: &b}
	for _, s := range []string{"abc", "", "de"} {
		if _, err := c.Write([]byte(s)); err != nil {
			t.Fatal(err)
		}
	}
	if c.N != 5 || b.String() != "abcde" {
		t.Fatalf("counted %d, wrote %q", c.N, b.String())
	}
	s := &CountingWriter{W: shortWriter{max: 2}}
	if n, err := s.Write([]byte("xyz")); n != 2 || err == nil || s.N != 2 {
		t.Fatalf("short write: n %d err %v counted %d", n, err, s.N)
	}
}
