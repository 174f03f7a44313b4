// Package e2e drives real ron processes end to end: TestMain builds the
// binary once, every test starts its own `ron serve` on free loopback ports
// with its own data directory and talks to it over the CLI and HTTP
// (issue 2 item 10, docs/storage.md); the index tests start several nodes
// that name each other as index peers (issue 3 item 6, docs/index.md). The
// package holds only tests; this file exists so that the package has a
// non-test file for tools that want one.
package e2e
