#!/usr/bin/env node
// canonicalize.mjs reads one JSON text on stdin and writes its RFC 8785
// (JCS) form to stdout, with no trailing newline, using npm `canonicalize`.
// The Go tests compare its bytes with descriptor.Canonicalize
// (docs/registry.md §10, "npm canonicalize (RFC 8785) yields the same
// bytes").
//
// Input that is not UTF-8 (checked strictly, a BOM is kept and so refused
// by JSON.parse), not one JSON text, or not canonicalisable (a lone
// surrogate, a number beyond double range) exits 1 with a message on
// stderr and nothing on stdout. Usage errors exit 2.
//
// Known difference: JSON.parse keeps the last of duplicate keys, while the
// registry refuses them (400 malformed).
import canonicalize from 'canonicalize';

/** Exits with code after a one-line message on stderr. */
function fail(code, message) {
  process.stderr.write(`canonicalize.mjs: ${message}\n`);
  process.exit(code);
}

/** Reads stdin to the end as bytes. */
async function readStdin() {
  const chunks = [];
  for await (const chunk of process.stdin) {
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/** Decodes bytes as strict UTF-8, keeping a byte order mark. */
function decodeUTF8(bytes) {
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    return fail(1, 'input is not valid UTF-8');
  }
}

/** Parses text as one JSON value. */
function parseJSON(text) {
  try {
    return JSON.parse(text);
  } catch (err) {
    return fail(1, `not JSON: ${err.message}`);
  }
}

/** Returns the RFC 8785 serialisation of value. */
function jcs(value) {
  try {
    return canonicalize(value);
  } catch (err) {
    return fail(1, `cannot canonicalise: ${err.message}`);
  }
}

if (process.argv.length > 2) {
  fail(2, 'usage: node canonicalize.mjs < input.json > output.jcs');
}
const out = jcs(parseJSON(decodeUTF8(await readStdin())));
process.stdout.write(out, () => process.exit(0));
