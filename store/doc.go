// Package store defines the content-addressed blob storage interface of ron
// (BlobStore), object ids (BLAKE3-256 digests), the per-64 KiB chunk hashing
// shared by the engines and the CLI, and the on-disk sidecar codec.
//
// Engines live in the sub-packages fs (durable, on disk) and memory (RAM
// only); both pass the conformance suite in storetest.
package store
