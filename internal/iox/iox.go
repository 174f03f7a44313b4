// Package iox holds small io helpers that several packages share.
package iox

import "io"

// CountingWriter passes writes through to W and counts the bytes W took.
type CountingWriter struct {
	W io.Writer
	N int64
}

// Write writes p to W and adds what W accepted to N.
func (c *CountingWriter) Write(p []byte) (int, error) {
	n, err := c.W.Write(p)
	c.N += int64(n)
	return n, err
}
