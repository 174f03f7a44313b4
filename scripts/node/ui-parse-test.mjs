// Unit checks of the status page's pure helpers (roles/ui/app.js): the
// Prometheus text parser, counter increases, histogram quantiles, the
// derived traffic and rejection rows, readiness items and formatting.
// No npm modules needed.
//
//   node scripts/node/ui-parse-test.mjs [path/to/app.js]
//
// Exits 0 and prints "ok N checks" when every check passes, else prints the
// failures and exits 1. roles/ui's Go tests run it.

import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const appPath = resolve(process.argv[2] || resolve(here, '../../roles/ui/app.js'));
// Loaded from a data: URL so it is an ES module whatever package.json is
// nearest; app.js boots the page only where there is a document.
const src = await readFile(appPath, 'utf8');
const ui = await import(`data:text/javascript;base64,${Buffer.from(src).toString('base64')}`);

const checks = [];
const check = (name, fn) => checks.push([name, fn]);

const SCRAPE = `# HELP ron_http_requests_total requests
# TYPE ron_http_requests_total counter
ron_http_requests_total{role="storage",route="/o/{b3}",code="200"} 10
ron_http_requests_total{role="storage",route="/o/{b3}",code="503"} 2
ron_http_requests_total{role="admin",route="/readyz",code="503"} 7
ron_http_request_duration_seconds_bucket{role="storage",route="/o/{b3}",le="0.005"} 4
ron_http_request_duration_seconds_bucket{role="storage",route="/o/{b3}",le="0.01"} 8
ron_http_request_duration_seconds_bucket{role="storage",route="/o/{b3}",le="0.1"} 12
ron_http_request_duration_seconds_bucket{role="storage",route="/o/{b3}",le="+Inf"} 12
ron_http_request_duration_seconds_sum{role="storage",route="/o/{b3}"} 0.1
ron_http_request_duration_seconds_count{role="storage",route="/o/{b3}"} 12
ron_busy_rejections_total{role="index",endpoint="/resolve/{key}"} 3
ron_busy_rejections_total{role="index",endpoint="/providers"} 0
ron_edge_rejects_total{role="edge",reason="invalid_range"} 5
weird_label{a="x\\"y",b="back\\\\slash",c="new\\nline",d="comma,}brace"} 1.5e3 1712345678000
go_gc_duration_seconds{quantile="0.5"} NaN
up +Inf
down -Inf
`;

check('parseProm: names, labels, values, escapes, timestamps', () => {
  const s = ui.parseProm(SCRAPE);
  assert.equal(s.length, 16);
  assert.deepEqual(s[0], { name: 'ron_http_requests_total', labels: { role: 'storage', route: '/o/{b3}', code: '200' }, value: 10 });
  const weird = s.find((x) => x.name === 'weird_label');
  assert.deepEqual(weird.labels, { a: 'x"y', b: 'back\\slash', c: 'new\nline', d: 'comma,}brace' });
  assert.equal(weird.value, 1500);
  assert.ok(Number.isNaN(s.find((x) => x.name === 'go_gc_duration_seconds').value));
  assert.equal(s.find((x) => x.name === 'up').value, Infinity);
  assert.equal(s.find((x) => x.name === 'down').value, -Infinity);
});

check('parseProm: bad lines are skipped', () => {
  const bad = [
    'no_value', 'bad value here x', '1leading_digit 1', 'm{unterminated="x 1', 'm{novalue=} 1', 'm{a="1"b="2"} 1',
    'm{="x"} 1', 'm 12abc', 'm{a="\\', '', '   ', '# just a comment', 'm 1 2 3',
  ];
  assert.deepEqual(ui.parseProm(bad.join('\n')), []);
  assert.deepEqual(ui.parseProm('m{} 2\r\nn 3\r\n'), [{ name: 'm', labels: {}, value: 2 }, { name: 'n', labels: {}, value: 3 }]);
});

check('counterIncrease: new series, growth, reset', () => {
  assert.equal(ui.counterIncrease(5, undefined), 5);
  assert.equal(ui.counterIncrease(9, 5), 4);
  assert.equal(ui.counterIncrease(2, 5), 2);
});

check('histogramQuantile: interpolation, +Inf bucket, empty', () => {
  const b = [{ le: 0.005, count: 4 }, { le: 0.01, count: 8 }, { le: 0.1, count: 12 }, { le: Infinity, count: 12 }];
  assert.equal(ui.histogramQuantile(0.5, b), 0.0075);
  assert.ok(Math.abs(ui.histogramQuantile(0.25, b) - 0.00375) < 1e-12);
  assert.ok(Math.abs(ui.histogramQuantile(0.99, b) - (0.01 + 0.09 * (11.88 - 8) / 4)) < 1e-12);
  assert.equal(ui.histogramQuantile(0.99, [{ le: 1, count: 1 }, { le: Infinity, count: 10 }]), 1);
  assert.ok(Number.isNaN(ui.histogramQuantile(0.5, [{ le: 1, count: 0 }, { le: Infinity, count: 0 }])));
  assert.ok(Number.isNaN(ui.histogramQuantile(0.5, [{ le: 1, count: 3 }])));
  assert.ok(Number.isNaN(ui.histogramQuantile(0.5, [])));
  // order of the buckets does not matter
  assert.equal(ui.histogramQuantile(0.5, [...b].reverse()), 0.0075);
});

check('traffic: totals, rates, 5xx without /readyz, windowed latency', () => {
  const prev = new ui.Snapshot(ui.parseProm(SCRAPE), 0);
  const next = SCRAPE
    .replace('code="200"} 10', 'code="200"} 30')
    .replace('code="503"} 2', 'code="503"} 6')
    .replace('code="503"} 7', 'code="503"} 9')
    .replace('le="0.005"} 4', 'le="0.005"} 4')
    .replace('le="0.01"} 8', 'le="0.01"} 8')
    .replace('le="0.1"} 12', 'le="0.1"} 36')
    .replace('le="+Inf"} 12', 'le="+Inf"} 36');
  const cur = new ui.Snapshot(ui.parseProm(next), 2000);
  const rows = ui.traffic(cur, prev);
  assert.deepEqual(rows.map((r) => r.role), ['storage', 'admin']);
  const st = rows[0];
  assert.equal(st.total, 36);
  assert.equal(st.rate, 12); // 24 requests in 2 s
  assert.equal(st.errRate, 2);
  assert.equal(st.windowed, true);
  assert.ok(st.p50 > 0.01 && st.p50 <= 0.1, `p50 ${st.p50}`); // all 24 new ones fell in (0.01, 0.1]
  const admin = rows[1];
  assert.equal(admin.rate, 1);
  assert.equal(admin.errRate, 0); // /readyz 503 is a readiness answer
  // without a previous snapshot: totals, no rates, latency since start
  const first = ui.traffic(prev, null)[0];
  assert.equal(first.rate, null);
  assert.equal(first.windowed, false);
  assert.equal(first.p50, 0.0075);
});

check('rejections: per counter and role, breakdown, missing counters as 0', () => {
  const prev = new ui.Snapshot(ui.parseProm(SCRAPE), 0);
  const cur = new ui.Snapshot(ui.parseProm(SCRAPE.replace('reason="invalid_range"} 5', 'reason="invalid_range"} 9')), 1000);
  const rows = ui.rejections(cur, prev);
  const by = Object.fromEntries(rows.map((r) => [`${r.metric}/${r.role}`, r]));
  assert.equal(by['ron_busy_rejections_total/index'].total, 3);
  assert.deepEqual(by['ron_busy_rejections_total/index'].top, [['/resolve/{key}', 3]]);
  assert.equal(by['ron_edge_rejects_total/edge'].rate, 4);
  assert.equal(by['ron_gateway_rejected_total/'].total, 0);
  assert.equal(by['ron_gateway_rejected_total/'].rate, 0);
});

check('roleItems and roleHealth', () => {
  const rz = { missing: ['edge:pack:world', 'storage', 'edgeish'], degraded: ['storage:disk', 'index'] };
  assert.deepEqual(ui.roleItems(rz, 'edge'), { missing: ['edge:pack:world'], degraded: [] });
  assert.deepEqual(ui.roleItems(rz, 'storage'), { missing: ['storage'], degraded: ['storage:disk'] });
  assert.deepEqual(ui.roleItems(null, 'edge'), { missing: [], degraded: [] });
  assert.equal(ui.roleHealth({ ready: true, degraded: false }, { missing: [], degraded: [] }), 'ready');
  assert.equal(ui.roleHealth({ ready: true, degraded: true }, { missing: [], degraded: [] }), 'degraded');
  assert.equal(ui.roleHealth({ ready: true, degraded: false }, { missing: [], degraded: ['index'] }), 'degraded');
  assert.equal(ui.roleHealth({ ready: false, degraded: true }, { missing: [], degraded: [] }), 'not ready');
  assert.equal(ui.roleHealth({ ready: true, degraded: false }, { missing: ['edge:pack:x'], degraded: [] }), 'not ready');
});

check('formatting', () => {
  assert.equal(ui.fmtBytes(0), '0 B');
  assert.equal(ui.fmtBytes(1536), '1.5 KiB');
  assert.equal(ui.fmtBytes(1073741824), '1.0 GiB');
  assert.equal(ui.fmtBytes(undefined), '—');
  assert.equal(ui.fmtUptime(0), '0s');
  assert.equal(ui.fmtUptime(65), '1m 5s');
  assert.equal(ui.fmtUptime(90061), '1d 1h');
  assert.equal(ui.fmtUptime(-1), '—');
  assert.equal(ui.fmtLatency(0.0075), '7.5 ms');
  assert.equal(ui.fmtLatency(0.0004), '400 µs');
  assert.equal(ui.fmtLatency(2.5), '2.50 s');
  assert.equal(ui.fmtLatency(NaN), '—');
  assert.equal(ui.fmtRate(null), '—');
  assert.equal(ui.fmtRate(0), '0');
  assert.equal(ui.fmtRate(0.5), '0.50');
  assert.equal(ui.fmtRate(12.34), '12.3');
  assert.equal(ui.fmtCount(41.6), '42');
  assert.equal(ui.fmtCount(undefined), '—');
});

let failed = 0;
for (const [name, fn] of checks) {
  try {
    fn();
  } catch (err) {
    failed++;
    console.error(`FAIL ${name}\n${err.stack}`);
  }
}
if (failed > 0) {
  console.error(`${failed} of ${checks.length} checks failed`);
  process.exit(1);
}
console.log(`ok ${checks.length} checks`);
