#!/usr/bin/env node
// sse-client.mjs subscribes to BASE_URL/registry/stream with npm
// `eventsource`, a WHATWG EventSource, and prints one JSON line per
// `registry.update` event to stdout:
//
//   {"id":"<event id>","version":N,"payload_b3":"b3:…"}
//
// Reconnection is the library's own: it waits the server's `retry:` (2000 ms)
// and resumes with the Last-Event-ID of the last event it saw
// (docs/registry.md §2).
//
// Usage: node sse-client.mjs BASE_URL --count N --timeout-ms T
//
// Exit codes: 0 after N events; 1 when the stream failed for good (a
// non-200 answer or a wrong content type, which a WHATWG client never
// retries) or an event's data is not the expected JSON; 2 usage; 3 when T
// ms passed before N events. Connection state changes go to stderr, one
// line each ("open", "error: …").
import { parseArgs } from 'node:util';
import { EventSource } from 'eventsource';

/** Writes one line to stderr. */
function log(line) {
  process.stderr.write(`sse-client: ${line}\n`);
}

/** Exits with code once everything written to stdout is flushed. */
function finish(code, message) {
  if (message) {
    log(message);
  }
  process.stdout.write('', () => process.exit(code));
}

/** Parses the command line: the base URL, --count and --timeout-ms. */
function parseCommandLine() {
  const usage = 'usage: node sse-client.mjs BASE_URL --count N --timeout-ms T';
  let parsed;
  try {
    parsed = parseArgs({
      allowPositionals: true,
      options: { count: { type: 'string' }, 'timeout-ms': { type: 'string' } },
    });
  } catch (err) {
    return finish(2, `${err.message}; ${usage}`);
  }
  const { values, positionals } = parsed;
  const count = Number(values.count);
  const timeoutMs = Number(values['timeout-ms']);
  if (positionals.length !== 1 || !Number.isSafeInteger(count) || count < 1 ||
      !Number.isSafeInteger(timeoutMs) || timeoutMs < 1) {
    return finish(2, usage);
  }
  return { url: new URL('registry/stream', positionals[0].replace(/\/*$/, '/')), count, timeoutMs };
}

/** Returns the line printed for one registry.update event, or null if bad. */
function lineOf(event) {
  let data;
  try {
    data = JSON.parse(event.data);
  } catch {
    return null;
  }
  if (!Number.isSafeInteger(data?.version) || typeof data.payload_b3 !== 'string') {
    return null;
  }
  return JSON.stringify({ id: event.lastEventId, version: data.version, payload_b3: data.payload_b3 });
}

/** Streams events until count were printed, the stream fails or time runs out. */
function run({ url, count, timeoutMs }) {
  const es = new EventSource(url);
  let seen = 0;
  let stopped = false;
  const stop = (code, message) => {
    if (stopped) {
      return;
    }
    stopped = true;
    clearTimeout(timer);
    es.close();
    finish(code, message);
  };
  const timer = setTimeout(() => stop(3, `timed out after ${timeoutMs} ms with ${seen} of ${count} events`), timeoutMs);
  es.addEventListener('open', () => log('open'));
  es.addEventListener('error', (err) => {
    log(`error: ${err.message ?? 'unknown'} (code ${err.code ?? '-'})`);
    if (es.readyState === EventSource.CLOSED) {
      stop(1, 'stream failed for good');
    }
  });
  es.addEventListener('registry.update', (event) => {
    if (stopped) {
      return;
    }
    const line = lineOf(event);
    if (line === null) {
      stop(1, `bad registry.update data: ${event.data}`);
      return;
    }
    process.stdout.write(`${line}\n`);
    seen += 1;
    if (seen === count) {
      stop(0);
    }
  });
}

const args = parseCommandLine();
if (args) {
  run(args);
}
