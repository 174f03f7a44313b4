#!/usr/bin/env node
// pmtiles-client.mjs reads one PMTiles archive over HTTP with npm `pmtiles`
// (a `PMTiles` over a `FetchSource`, the browser-side reader) and answers
// commands, so that a test can replace the archive on the server between two
// commands and watch one PMTiles instance (with its cached header and
// directories) recover.
//
// Usage: node pmtiles-client.mjs ARCHIVE_URL --timeout-ms T
//
// Commands come on stdin, one JSON object per line:
//
//   {"op":"header"}                 the header (cached by the library)
//   {"op":"metadata"}               the JSON metadata
//   {"op":"tile","z":Z,"x":X,"y":Y} one tile's bytes (decompressed as the
//                                   header's tile compression says)
//
// Every command gets one JSON line on stdout:
//
//   {"op":…,"ok":true,"header":{…}|"metadata":…|"found":bool,"data":"<base64>",
//    "exchanges":[{"range":"bytes=…","if_match":null,"cache":"reload"|null,
//                  "status":206,"etag":"\"…\"","content_range":"bytes …"}]}
//   {"op":…,"ok":false,"error":"…","exchanges":[…]}
//
// `exchanges` lists every HTTP request the library made while running the
// command: its Range, If-Match (the library sends none: it detects a changed
// archive from the ETag of each response, or a 416, and then re-reads the
// header once) and fetch cache mode, and the answer's status, ETag and
// Content-Range. The header also carries the library's `etag`.
//
// Exit codes: 0 at the end of stdin; 2 usage; 3 when one command took more
// than T ms.
import { parseArgs } from 'node:util';
import { createInterface } from 'node:readline';
import { FetchSource, PMTiles } from 'pmtiles';

/** Writes one line to stderr. */
function log(line) {
  process.stderr.write(`pmtiles-client: ${line}\n`);
}

/** Exits with code once everything written to stdout is flushed. */
function finish(code, message) {
  if (message) {
    log(message);
  }
  process.stdout.write('', () => process.exit(code));
}

/** Parses the command line: the archive URL and --timeout-ms. */
function parseCommandLine() {
  const usage = 'usage: node pmtiles-client.mjs ARCHIVE_URL --timeout-ms T';
  let parsed;
  try {
    parsed = parseArgs({ allowPositionals: true, options: { 'timeout-ms': { type: 'string' } } });
  } catch (err) {
    return finish(2, `${err.message}; ${usage}`);
  }
  const { values, positionals } = parsed;
  const timeoutMs = Number(values['timeout-ms']);
  if (positionals.length !== 1 || !Number.isSafeInteger(timeoutMs) || timeoutMs < 1) {
    return finish(2, usage);
  }
  return { url: positionals[0], timeoutMs };
}

/**
 * Wraps globalThis.fetch so that every request the library makes is
 * recorded in the returned log (the current command's exchanges).
 */
function recordFetches() {
  const journal = { exchanges: [] };
  const realFetch = globalThis.fetch;
  globalThis.fetch = async (input, init = {}) => {
    const headers = new Headers(init.headers);
    const ex = {
      range: headers.get('range'),
      if_match: headers.get('if-match'),
      cache: init.cache ?? null,
    };
    journal.exchanges.push(ex);
    try {
      const resp = await realFetch(input, init);
      ex.status = resp.status;
      ex.etag = resp.headers.get('etag');
      ex.content_range = resp.headers.get('content-range');
      return resp;
    } catch (err) {
      ex.error = String(err?.message ?? err);
      throw err;
    }
  };
  return journal;
}

/** Returns the JSON-able fields of a pmtiles Header. */
function headerFields(h) {
  const out = {};
  for (const [k, v] of Object.entries(h)) {
    if (typeof v === 'number' || typeof v === 'string' || typeof v === 'boolean') {
      out[k] = v;
    }
  }
  return out;
}

/** Runs one command against p and returns the fields of its answer. */
async function execute(p, cmd) {
  switch (cmd.op) {
    case 'header':
      return { header: headerFields(await p.getHeader()) };
    case 'metadata':
      return { metadata: await p.getMetadata() };
    case 'tile': {
      const resp = await p.getZxy(cmd.z, cmd.x, cmd.y);
      if (!resp) {
        return { found: false };
      }
      return { found: true, data: Buffer.from(resp.data).toString('base64') };
    }
    default:
      throw new Error(`unknown op ${JSON.stringify(cmd.op)}`);
  }
}

/** Runs cmd with a time limit; the process exits 3 when it is passed. */
async function withLimit(timeoutMs, what, fn) {
  let timer;
  const limit = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timeout after ${timeoutMs} ms: ${what}`)), timeoutMs);
  });
  try {
    return await Promise.race([fn(), limit]);
  } catch (err) {
    if (String(err?.message).startsWith('timeout after')) {
      finish(3, err.message);
    }
    throw err;
  } finally {
    clearTimeout(timer);
  }
}

/** Answers every stdin line in order, then exits 0. */
async function run({ url, timeoutMs }) {
  const journal = recordFetches();
  const p = new PMTiles(new FetchSource(url));
  const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
  for await (const line of lines) {
    if (line.trim() === '') {
      continue;
    }
    journal.exchanges = [];
    let cmd = { op: null };
    let answer;
    try {
      cmd = JSON.parse(line);
      const fields = await withLimit(timeoutMs, line, () => execute(p, cmd));
      answer = { op: cmd.op, ok: true, ...fields };
    } catch (err) {
      answer = { op: cmd.op, ok: false, error: `${err?.name ?? 'Error'}: ${err?.message ?? err}` };
    }
    answer.exchanges = journal.exchanges;
    process.stdout.write(`${JSON.stringify(answer)}\n`);
  }
  finish(0);
}

const args = parseCommandLine();
if (args) {
  run(args).catch((err) => finish(1, `fatal: ${err?.stack ?? err}`));
}
