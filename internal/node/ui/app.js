// ron status page. Polls /api/v1/status, /readyz and /metrics every 2 s and
// renders them without reloading. No dependencies, no inline script (the
// page's Content-Security-Policy is default-src 'self'). Everything is
// written as text nodes, never parsed as markup: pack names and errors come
// from the node and are shown as text.
//
// The pure helpers (Prometheus parser, histogram quantiles, counter rates,
// formatting) are exported for scripts/node/ui-parse-test.mjs; the page
// boots only where there is a document.

export const POLL_MS = 2000;
const FETCH_TIMEOUT_MS = 5000;
const TOKEN_KEY = 'ron.adminToken';
const ROLE_ORDER = ['registry', 'index', 'storage', 'edge', 'gateway', 'admin', 'node'];

// ---- Prometheus text exposition ----------------------------------------

// parseProm parses Prometheus text format 0.0.4 into samples
// [{name, labels, value}]. Comments, blank lines and malformed lines are
// skipped; a trailing timestamp is ignored.
export function parseProm(text) {
  const out = [];
  for (const raw of String(text).split('\n')) {
    const line = raw.trim();
    if (line === '' || line[0] === '#') continue;
    const s = parseLine(line);
    if (s) out.push(s);
  }
  return out;
}

const NAME_RE = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;

// parseLine parses one sample line or returns null.
function parseLine(line) {
  let i = 0;
  while (i < line.length && line[i] !== '{' && line[i] !== ' ' && line[i] !== '\t') i++;
  const name = line.slice(0, i);
  if (!NAME_RE.test(name)) return null;
  const labels = {};
  if (line[i] === '{') {
    i = parseLabels(line, i + 1, labels);
    if (i < 0) return null;
  }
  const fields = line.slice(i).trim().split(/\s+/);
  if (fields[0] === '' || fields.length > 2) return null;
  const value = parseValue(fields[0]);
  return value === null ? null : { name, labels, value };
}

// parseLabels reads name="value" pairs from line at i (just after '{') into
// labels and returns the index after the closing '}', or -1.
function parseLabels(line, i, labels) {
  for (;;) {
    while (line[i] === ' ' || line[i] === ',') i++;
    if (line[i] === '}') return i + 1;
    const eq = line.indexOf('=', i);
    if (eq < 0 || line[eq + 1] !== '"') return -1;
    const key = line.slice(i, eq).trim();
    if (!NAME_RE.test(key)) return -1;
    let j = eq + 2;
    let val = '';
    for (; j < line.length && line[j] !== '"'; j++) {
      if (line[j] !== '\\') {
        val += line[j];
        continue;
      }
      j++;
      if (j >= line.length) return -1;
      val += line[j] === 'n' ? '\n' : line[j];
    }
    if (j >= line.length) return -1;
    labels[key] = val;
    i = j + 1;
    if (line[i] !== ',' && line[i] !== '}') return -1;
  }
}

// parseValue parses a sample value (a float, NaN, +Inf or -Inf) or returns null.
export function parseValue(s) {
  switch (s) {
    case '+Inf': case 'Inf': return Infinity;
    case '-Inf': return -Infinity;
    case 'NaN': return NaN;
  }
  if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(s)) return null;
  return Number(s);
}

// seriesKey identifies a series: its name and its labels in name order.
export function seriesKey(name, labels) {
  const parts = Object.keys(labels).sort().map((k) => `${k}=${JSON.stringify(labels[k])}`);
  return `${name}{${parts.join(',')}}`;
}

// Snapshot is one scrape of /metrics taken at `at` (milliseconds).
export class Snapshot {
  constructor(samples, at) {
    this.at = at;
    this.byKey = new Map();
    this.byName = new Map();
    for (const s of samples) {
      this.byKey.set(seriesKey(s.name, s.labels), s.value);
      if (!this.byName.has(s.name)) this.byName.set(s.name, []);
      this.byName.get(s.name).push(s);
    }
  }

  // series returns every sample of one metric name.
  series(name) {
    return this.byName.get(name) || [];
  }
}

// counterIncrease is how much a counter grew from before to now: a series
// that appeared counts from 0, a reset (now < before) counts from 0 again.
export function counterIncrease(now, before) {
  if (before === undefined || now < before) return now;
  return now - before;
}

// increase sums the growth of the series of `name` matching pred between
// two snapshots.
export function increase(cur, prev, name, pred = () => true) {
  let sum = 0;
  for (const s of cur.series(name)) {
    if (pred(s.labels)) sum += counterIncrease(s.value, prev.byKey.get(seriesKey(name, s.labels)));
  }
  return sum;
}

// sumBy sums the series of `name` matching pred by the value of one label.
export function sumBy(snap, name, label, pred = () => true) {
  const out = new Map();
  for (const s of snap.series(name)) {
    if (!pred(s.labels)) continue;
    const k = s.labels[label] ?? '';
    out.set(k, (out.get(k) || 0) + s.value);
  }
  return out;
}

// ---- histograms ----------------------------------------------------------

// histogramQuantile estimates quantile q (0..1) from cumulative buckets
// [{le, count}] the way Prometheus's histogram_quantile does: linear
// interpolation inside the bucket holding the rank, 0 as the first bucket's
// lower bound, the highest finite bound when the rank falls in +Inf. NaN
// without observations or without a +Inf bucket.
export function histogramQuantile(q, buckets) {
  const b = buckets.filter((x) => !Number.isNaN(x.le)).sort((x, y) => x.le - y.le);
  if (b.length === 0 || b[b.length - 1].le !== Infinity) return NaN;
  const total = b[b.length - 1].count;
  if (!(total > 0)) return NaN;
  const rank = Math.min(Math.max(q, 0), 1) * total;
  let prevLe = 0;
  let prevCount = 0;
  for (const { le, count } of b) {
    if (count >= rank) {
      if (le === Infinity) return prevLe;
      if (count === prevCount) return le;
      return prevLe + ((le - prevLe) * (rank - prevCount)) / (count - prevCount);
    }
    prevLe = le;
    prevCount = count;
  }
  return prevLe;
}

// bucketsBy sums the _bucket series of histogram `base` by one label and by
// le: Map labelValue → Map le → cumulative count.
export function bucketsBy(snap, base, label) {
  const out = new Map();
  for (const s of snap.series(`${base}_bucket`)) {
    const le = parseValue(s.labels.le ?? '');
    if (le === null) continue;
    const k = s.labels[label] ?? '';
    if (!out.has(k)) out.set(k, new Map());
    const m = out.get(k);
    m.set(le, (m.get(le) || 0) + s.value);
  }
  return out;
}

// bucketList turns Map le → count into [{le, count}], subtracting the
// matching counts of `before` (a Map too, or undefined) counter-wise.
export function bucketList(now, before) {
  const out = [];
  for (const [le, count] of now) out.push({ le, count: before ? counterIncrease(count, before.get(le)) : count });
  return out;
}

// ---- derived views -------------------------------------------------------

const REQUESTS = 'ron_http_requests_total';
const DURATION = 'ron_http_request_duration_seconds';

// traffic derives one row per role label of ron_http_requests_total:
// {role, total, rate, errRate, p50, p99, windowed}; errRate counts isError
// requests. Rates (per second) need
// a previous snapshot; latency is taken over the requests since the
// previous snapshot when there were any (windowed), else since start.
export function traffic(cur, prev) {
  const totals = sumBy(cur, REQUESTS, 'role');
  const buckets = bucketsBy(cur, DURATION, 'role');
  const prevBuckets = prev ? bucketsBy(prev, DURATION, 'role') : new Map();
  const dt = prev ? (cur.at - prev.at) / 1000 : 0;
  const rows = [];
  for (const role of new Set([...totals.keys(), ...buckets.keys()])) {
    const row = { role, total: totals.get(role) || 0, rate: null, errRate: null, p50: NaN, p99: NaN, windowed: false };
    if (dt > 0) {
      row.rate = increase(cur, prev, REQUESTS, (l) => l.role === role) / dt;
      row.errRate = increase(cur, prev, REQUESTS, (l) => l.role === role && isError(l)) / dt;
    }
    latency(row, buckets.get(role), prev ? prevBuckets.get(role) : undefined, Boolean(prev));
    rows.push(row);
  }
  return rows.sort(byRole((r) => r.role));
}

// isError reports whether a request series counts as a server error: a 5xx
// other than /readyz's 503, which is a readiness answer (the page itself
// polls /readyz while a node is not ready).
export function isError(labels) {
  return String(labels.code).startsWith('5') && labels.route !== '/readyz';
}

// latency fills row.p50/p99 from the window's buckets, or since start.
function latency(row, now, before, havePrev) {
  if (!now) return;
  const win = havePrev ? bucketList(now, before) : [];
  const winTotal = win.find((b) => b.le === Infinity)?.count || 0;
  const list = winTotal > 0 ? win : bucketList(now);
  row.windowed = winTotal > 0;
  row.p50 = histogramQuantile(0.5, list);
  row.p99 = histogramQuantile(0.99, list);
}

// REJECTIONS are the rejection counters the page shows, with the label that
// breaks each down.
export const REJECTIONS = [
  { name: 'ron_busy_rejections_total', title: 'busy', by: 'endpoint' },
  { name: 'ron_gateway_rejected_total', title: 'gateway admission', by: 'reason' },
  { name: 'ron_edge_rejects_total', title: 'edge rejects', by: 'reason' },
];

// rejections derives one row per (counter, role): {metric, title, role,
// total, rate, top:[[label, total]…]} where top lists the non-zero
// breakdown, largest first. A counter not exported yet shows as 0.
export function rejections(cur, prev) {
  const dt = prev ? (cur.at - prev.at) / 1000 : 0;
  const rows = [];
  for (const r of REJECTIONS) {
    const byRole = sumBy(cur, r.name, 'role');
    if (byRole.size === 0) byRole.set('', 0);
    for (const [role, total] of byRole) {
      const own = (l) => (l.role ?? '') === role;
      const top = [...sumBy(cur, r.name, r.by, own)].filter(([, v]) => v > 0).sort((a, b) => b[1] - a[1]);
      const rate = dt > 0 ? increase(cur, prev, r.name, own) / dt : null;
      rows.push({ metric: r.name, title: r.title, role, total, rate, top });
    }
  }
  return rows;
}

// roleItems returns the readiness items (/readyz missing and degraded) that
// belong to one role: its name or "<role>:<detail>".
export function roleItems(readyz, role) {
  const own = (it) => it === role || it.startsWith(`${role}:`);
  return { missing: (readyz?.missing || []).filter(own), degraded: (readyz?.degraded || []).filter(own) };
}

// roleHealth names a role's readiness: "ready", "degraded" or "not ready".
export function roleHealth(r, items) {
  if (!r.ready || items.missing.length > 0) return 'not ready';
  if (r.degraded || items.degraded.length > 0) return 'degraded';
  return 'ready';
}

// byRole orders rows by the role table's order, unknown names last.
function byRole(key) {
  const rank = (n) => {
    const i = ROLE_ORDER.indexOf(n);
    return i < 0 ? ROLE_ORDER.length : i;
  };
  return (a, b) => rank(key(a)) - rank(key(b)) || String(key(a)).localeCompare(String(key(b)));
}

// ---- formatting ----------------------------------------------------------

// fmtBytes formats a byte count with binary units ("1.5 MiB").
export function fmtBytes(n) {
  if (typeof n !== 'number' || !Number.isFinite(n)) return '—';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
  let i = 0;
  let v = n;
  while (Math.abs(v) >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return i === 0 ? `${v} B` : `${v.toFixed(1)} ${units[i]}`;
}

// fmtUptime formats seconds as the two largest units ("3d 4h", "5m 7s").
export function fmtUptime(s) {
  if (typeof s !== 'number' || !Number.isFinite(s) || s < 0) return '—';
  const parts = [[Math.floor(s / 86400), 'd'], [Math.floor(s / 3600) % 24, 'h'], [Math.floor(s / 60) % 60, 'm'], [Math.floor(s) % 60, 's']];
  const first = parts.findIndex(([v]) => v > 0);
  if (first < 0) return '0s';
  return parts.slice(first, first + 2).map(([v, u]) => `${v}${u}`).join(' ');
}

// fmtLatency formats a duration in seconds ("850 µs", "12.5 ms", "1.20 s").
export function fmtLatency(v) {
  if (typeof v !== 'number' || !Number.isFinite(v)) return '—';
  if (v < 1e-3) return `${Math.round(v * 1e6)} µs`;
  if (v < 1) return `${Number((v * 1e3).toPrecision(3))} ms`;
  return `${v.toFixed(2)} s`;
}

// fmtRate formats a per-second rate ("—" before the second poll).
export function fmtRate(r) {
  if (r === null || r === undefined || !Number.isFinite(r)) return '—';
  if (r === 0) return '0';
  return r < 10 ? r.toFixed(2) : r.toFixed(1);
}

// fmtCount formats a counter value as an integer.
export function fmtCount(v) {
  return typeof v === 'number' && Number.isFinite(v) ? String(Math.round(v)) : '—';
}

// ---- DOM -----------------------------------------------------------------

// el creates an element with attributes and children (strings become text).
function el(tag, attrs = {}, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') e.className = v;
    else e.setAttribute(k, v === true ? '' : String(v));
  }
  for (const k of kids.flat()) {
    if (k !== null && k !== undefined && k !== false) e.append(k instanceof Node ? k : String(k));
  }
  return e;
}

// table renders rows [{key, cls, cells:{colKey: content}}] under columns
// [{key, label, cls}]; every cell carries data-k and data-label (the
// stacked phone layout prints the label).
function table(columns, rows, empty = 'none') {
  if (rows.length === 0) return el('p', { class: 'muted' }, empty);
  const head = el('thead', {}, el('tr', {}, columns.map((c) => el('th', { class: c.cls, scope: 'col' }, c.label))));
  const body = el('tbody', {}, rows.map((r) => el('tr', { 'data-key': r.key, class: r.cls },
    columns.map((c) => el('td', { 'data-k': c.key, 'data-label': c.label, class: c.cls }, r.cells[c.key] ?? '')))));
  return el('div', { class: 'scroll' }, el('table', { class: 'stack' }, head, body));
}

// facts renders [[label, value, key, cls]…] as a definition list.
function facts(pairs) {
  return el('dl', { class: 'facts' }, pairs.map(([label, value, key, cls]) =>
    el('div', { 'data-k': key, class: cls }, el('dt', {}, label), el('dd', {}, value ?? '—'))));
}

// fill replaces a section's body.
function fill(id, ...kids) {
  document.querySelector(`#${id} .body`).replaceChildren(...kids.flat());
}

function badge(state, text = state) {
  return el('span', { class: 'badge', 'data-state': state.replace(' ', '-') }, text);
}

function meter(value, max) {
  if (!(max > 0)) return '';
  return el('meter', { min: 0, max, value: Math.min(value, max), low: max * 0.5, high: max * 0.8, optimum: 0 });
}

function yesNo(v) {
  return v === undefined ? '—' : v ? 'yes' : 'no';
}

// ---- sections ------------------------------------------------------------

function renderHeader(st) {
  const id = st.node_id || st.cluster?.node_id || location.host;
  document.getElementById('node-id').textContent = id;
  document.getElementById('node-version').textContent = st.version || '—';
  document.getElementById('node-uptime').textContent = fmtUptime(st.uptime_s);
  document.getElementById('node-mode').textContent = st.amnesia ? 'amnesia (RAM only)' : 'persistent';
  setBadge(st.ready ? 'ready' : 'not ready');
  document.title = `ron ${id} — ${st.ready ? 'ready' : 'NOT READY'}`;
}

function setBadge(state) {
  const b = document.getElementById('node-ready');
  b.textContent = state;
  b.dataset.state = state.replace(' ', '-');
}

function renderRoles(st, readyz) {
  const cols = [
    { key: 'name', label: 'role' }, { key: 'state', label: 'state' }, { key: 'health', label: 'readiness' },
    { key: 'restarts', label: 'restarts', cls: 'num' }, { key: 'listen', label: 'listen' }, { key: 'error', label: 'last error' },
  ];
  const rows = (st.roles || []).map((r) => {
    const items = roleItems(readyz, r.name);
    const health = roleHealth(r, items);
    const list = [...items.missing.map((i) => el('li', { class: 'bad' }, `missing ${i}`)),
      ...items.degraded.map((i) => el('li', { class: 'warn' }, `degraded ${i}`))];
    return {
      key: r.name, cls: health === 'ready' ? '' : 'attn',
      cells: {
        name: el('strong', {}, r.name), state: badge(r.state === 'running' ? 'ok' : 'not-ready', r.state),
        health: el('div', {}, badge(health), list.length ? el('ul', { class: 'items' }, list) : ''),
        restarts: String(r.restarts ?? 0), listen: el('code', {}, r.listen || '—'),
        error: r.last_error ? el('span', { class: 'bad wrap' }, r.last_error) : el('span', { class: 'muted' }, '—'),
      },
    };
  });
  fill('roles', table(cols, rows, 'no roles enabled'));
}

function renderTraffic(cur, prev, metricsErr) {
  if (metricsErr) return fill('traffic', metricsNote(metricsErr));
  const rows = traffic(cur, prev).map((r) => ({
    key: r.role,
    cells: {
      role: el('strong', {}, r.role), rate: fmtRate(r.rate), err: fmtRate(r.errRate), total: fmtCount(r.total),
      p50: latencyCell(r.p50, r.windowed), p99: latencyCell(r.p99, r.windowed),
    },
  }));
  const cols = [
    { key: 'role', label: 'role' }, { key: 'rate', label: 'req/s', cls: 'num' }, { key: 'err', label: '5xx/s', cls: 'num' },
    { key: 'total', label: 'total', cls: 'num' }, { key: 'p50', label: 'p50', cls: 'num' }, { key: 'p99', label: 'p99', cls: 'num' },
  ];
  fill('traffic', table(cols, rows, 'no requests yet'),
    el('p', { class: 'muted small' }, 'Rates between the last two polls; latency over those requests, or since start (marked *) when there were none.'));
}

function latencyCell(v, windowed) {
  return windowed || !Number.isFinite(v) ? fmtLatency(v) : el('span', { class: 'muted' }, `${fmtLatency(v)}*`);
}

function metricsNote(err) {
  const auth = err.status === 401 || err.status === 403;
  if (!auth) return el('p', { class: 'bad' }, `Metrics unavailable: ${err.message}`);
  return el('p', { class: 'warn' }, token()
    ? `The admin token was refused (HTTP ${err.status}): enter another under “Admin token” below.`
    : 'Metrics need an admin token from this address: enter one under “Admin token” below.');
}

function renderQueues(st) {
  const rows = (st.queues || []).map((q) => ({
    key: `${q.role}/${q.queue}`, cls: q.capacity > 0 && q.depth >= q.capacity ? 'attn' : '',
    cells: {
      queue: `${q.role} / ${q.queue}`, depth: el('span', { class: 'nowrap' }, `${fmtCount(q.depth)} / ${fmtCount(q.capacity)} `, meter(q.depth, q.capacity)),
      dropped: fmtCount(q.dropped),
    },
  }));
  const cols = [{ key: 'queue', label: 'queue' }, { key: 'depth', label: 'depth / capacity' }, { key: 'dropped', label: 'dropped', cls: 'num' }];
  fill('queues', table(cols, rows, 'no queues'));
}

function renderRejections(cur, prev, metricsErr) {
  if (metricsErr) return fill('rejections', metricsNote(metricsErr));
  const rows = rejections(cur, prev).map((r) => ({
    key: `${r.metric}/${r.role}`, cls: r.rate > 0 ? 'attn' : '',
    cells: {
      what: el('span', { title: r.metric }, r.role && !r.title.startsWith(r.role) ? `${r.title} · ${r.role}` : r.title),
      total: fmtCount(r.total), rate: fmtRate(r.rate),
      top: r.top.length ? el('span', { class: 'wrap' }, r.top.slice(0, 3).map(([k, v]) => `${k} ${fmtCount(v)}`).join(', ')) : el('span', { class: 'muted' }, '—'),
    },
  }));
  const cols = [{ key: 'what', label: 'counter' }, { key: 'total', label: 'total', cls: 'num' }, { key: 'rate', label: '/s', cls: 'num' }, { key: 'top', label: 'by' }];
  fill('rejections', table(cols, rows));
}

function roleDetails(st, name) {
  const r = (st.roles || []).find((x) => x.name === name);
  return r ? r.details || {} : null;
}

function notEnabled(name) {
  return el('p', { class: 'muted' }, `The ${name} role is not enabled on this node.`);
}

function renderStorage(st) {
  const d = roleDetails(st, 'storage');
  if (!d) return fill('storage', notEnabled('storage'));
  const used = d.bytes ?? NaN;
  const cap = used + (d.free_bytes ?? NaN);
  fill('storage',
    facts([
      ['objects', fmtCount(d.objects), 'objects'], ['stored', fmtBytes(used), 'bytes'], ['free', fmtBytes(d.free_bytes), 'free'],
      ['engine', d.engine, 'engine'], ['quarantined', fmtCount(d.quarantined ?? 0), 'quarantined', d.quarantined > 0 ? 'bad' : ''],
      ['announce', d.announce, 'announce'],
    ]),
    Number.isFinite(cap) && cap > 0 ? el('p', { class: 'capacity' }, meter(used, cap), ` ${(100 * used / cap).toFixed(1)}% of ${fmtBytes(cap)} used`) : '',
    d.repair ? el('div', {}, el('h3', {}, 'Repair'), facts(Object.entries(d.repair).map(([k, v]) => [k, fmtValue(v), `repair-${k}`]))) : '',
    d.sidecar_upgrade ? el('div', {}, el('h3', {}, 'Sidecar upgrade (v1 → v2)'),
      facts(Object.entries(d.sidecar_upgrade).map(([k, v]) => [k, fmtValue(v), `upgrade-${k}`,
        k === 'corrupt' && v > 0 || k === 'state' && String(v).startsWith('failed') ? 'bad' : '']))) : '');
}

function fmtValue(v) {
  if (v === null || v === undefined) return '—';
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}

function renderRegistry(st) {
  const d = roleDetails(st, 'registry');
  if (!d) return fill('registry', notEnabled('registry'));
  const reasons = d.write_unready_reasons || [];
  fill('registry', facts([
    ['head', fmtCount(d.head), 'head'], ['verified through', fmtCount(d.verified_through), 'verified'],
    ['checkpoint size', fmtCount(d.checkpoint_size), 'checkpoint'], ['open proposals', fmtCount(d.open_proposals), 'proposals'],
    ['writes', d.write_ready ? 'ready' : `not ready${reasons.length ? `: ${reasons.join(', ')}` : ''}`, 'write', d.write_ready ? '' : 'warn'],
    ['read only', yesNo(d.read_only), 'readonly'], ['dev signer', yesNo(d.dev_signer), 'devsigner'],
    ['payload', d.payload_b3_prefix ? `b3:${d.payload_b3_prefix}…` : '—', 'payload'], ['origin', d.origin, 'origin', 'wrap'],
  ]));
}

function renderEdge(st) {
  const d = roleDetails(st, 'edge');
  if (!d) return fill('edge', notEnabled('edge'));
  const packs = d.packs || {};
  const mounted = (packs.mounted || []).map((p) => ({
    key: p.name, cells: { name: el('strong', {}, p.name), kind: p.kind, size: fmtBytes(p.bytes), state: badge('ok', 'mounted') },
  }));
  const broken = (failed, state) => Object.entries(failed || {}).map(([name, why]) => ({
    key: name, cls: 'attn', cells: { name: el('strong', {}, name), kind: '', size: el('span', { class: 'bad wrap' }, why), state: badge(state) },
  }));
  const rows = [...broken(packs.failed, 'failed'), ...broken(packs.skipped, 'skipped'), ...mounted];
  const cols = [{ key: 'name', label: 'pack' }, { key: 'state', label: 'state' }, { key: 'kind', label: 'kind' }, { key: 'size', label: 'size / error' }];
  const c = d.cache || {};
  fill('edge', table(cols, rows, 'no packs'),
    packs.last_error && !shown(packs) ? el('p', { class: 'bad wrap' }, `last error: ${packs.last_error}`) : '',
    facts([
      ['cache', `${fmtCount(c.entries)} entries, ${fmtBytes(c.bytes)} of ${fmtBytes(c.max_bytes)}${c.memory ? ' (RAM)' : ''}`, 'cache'],
      ['origins', (d.origins || []).join(', ') || 'none', 'origins'],
      ['fill queue', d.queue ? `${fmtCount(d.queue.depth)} / ${fmtCount(d.queue.capacity)}` : '—', 'fillq'],
    ]));
}

// shown reports whether the packs' last error is one of the failed or
// skipped rows already listed (a failed replacement shows only there).
function shown(packs) {
  return Object.entries({ ...packs.failed, ...packs.skipped }).some(([name, why]) => packs.last_error === `${name}: ${why}`);
}

function renderGateway(st) {
  const d = roleDetails(st, 'gateway');
  if (!d) return fill('gateway', notEnabled('gateway'));
  const breakers = Object.entries(d.breakers || {}).map(([k, v]) => el('span', { class: 'chip', 'data-state': v }, `${k}: ${v}`));
  const shed = d.shedding || {};
  fill('gateway', facts([
    ['in flight', fmtCount(d.inflight), 'inflight'], ['waiting', fmtCount(d.waiting), 'waiting'],
    ['shedding', shed.writes || shed.reads ? [shed.writes && 'writes', shed.reads && 'reads'].filter(Boolean).join(', ') : 'no', 'shedding', shed.writes || shed.reads ? 'warn' : ''],
    ['tenants version', fmtCount(d.tenants_version), 'tenants'],
  ]), breakers.length ? el('p', { class: 'chips' }, breakers) : '');
}

function renderCluster(st) {
  const section = document.getElementById('cluster');
  const c = st.cluster;
  section.hidden = !c;
  if (!c) return;
  const rows = (c.members || []).map((m) => ({
    key: m.id, cls: m.state === 'alive' ? '' : 'attn',
    cells: {
      id: el('code', { class: 'wrap' }, m.id), state: badge(m.state === 'alive' ? 'ok' : 'not-ready', m.state),
      roles: (m.roles || []).join(', '), zone: m.zone || '—', since: m.since || '—',
    },
  }));
  const cols = [{ key: 'id', label: 'member' }, { key: 'state', label: 'state' }, { key: 'roles', label: 'roles' }, { key: 'zone', label: 'zone' }, { key: 'since', label: 'since' }];
  fill('cluster', facts([['node', c.node_id, 'node'], ['zone', c.zone || '—', 'zone']]), table(cols, rows, 'no members'));
}

// ---- polling -------------------------------------------------------------

// HTTPError is a non-2xx answer.
class HTTPError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

// token is the admin token kept in this tab's session storage ('' when
// none, or when storage is unavailable).
function token() {
  try {
    return sessionStorage.getItem(TOKEN_KEY) || '';
  } catch {
    return '';
  }
}

// setToken keeps (or, with '', forgets) the admin token.
function setToken(v) {
  try {
    if (v) sessionStorage.setItem(TOKEN_KEY, v);
    else sessionStorage.removeItem(TOKEN_KEY);
  } catch (err) {
    showError(`cannot keep the token: ${err.message}`);
  }
}

async function get(path, { auth = false, anyStatus = false } = {}) {
  const headers = {};
  const tok = auth ? token() : '';
  if (tok) headers.Authorization = `Bearer ${tok}`;
  const resp = await fetch(new URL(path, location.href), { headers, cache: 'no-store', signal: AbortSignal.timeout(FETCH_TIMEOUT_MS) });
  if (!resp.ok && !anyStatus) throw new HTTPError(resp.status, `${path.replace('../', '/')}: HTTP ${resp.status}`);
  return resp;
}

const state = { prev: null, polls: 0, timer: 0, busy: false };

async function pollOnce() {
  const [st, rz, mx] = await Promise.allSettled([
    get('../api/v1/status').then((r) => r.json()),
    get('../readyz', { anyStatus: true }).then((r) => r.json()),
    get('../metrics', { auth: true }).then(async (r) => new Snapshot(parseProm(await r.text()), performance.now())),
  ]);
  state.polls++;
  const updated = document.getElementById('updated');
  updated.dataset.polls = String(state.polls);
  if (st.status === 'rejected') {
    showError(`admin listener unreachable: ${st.reason.message}`);
    setBadge('unreachable');
    return;
  }
  showError('');
  render(st.value, rz.status === 'fulfilled' ? rz.value : null, mx);
  updated.textContent = `updated ${new Date().toLocaleTimeString()} · poll ${state.polls}`;
}

function render(st, readyz, mx) {
  const metricsErr = mx.status === 'rejected' ? mx.reason : null;
  const cur = metricsErr ? null : mx.value;
  if (metricsErr && (metricsErr.status === 401 || metricsErr.status === 403)) document.getElementById('auth').open = true;
  renderHeader(st);
  renderRoles(st, readyz);
  renderTraffic(cur, state.prev, metricsErr);
  renderQueues(st);
  renderRejections(cur, state.prev, metricsErr);
  renderStorage(st);
  renderRegistry(st);
  renderEdge(st);
  renderGateway(st);
  renderCluster(st);
  if (cur) state.prev = cur;
}

function showError(msg) {
  const e = document.getElementById('error');
  e.textContent = msg;
  e.hidden = msg === '';
}

async function tick() {
  if (state.busy) return;
  state.busy = true;
  try {
    await pollOnce();
  } catch (err) {
    showError(`status page error: ${err.message}`);
  } finally {
    state.busy = false;
    schedule(POLL_MS);
  }
}

function schedule(ms) {
  clearTimeout(state.timer);
  state.timer = setTimeout(tick, ms);
}

function setupToken() {
  const input = document.getElementById('token');
  input.value = token();
  document.getElementById('token-form').addEventListener('submit', (ev) => {
    ev.preventDefault();
    setToken(input.value.trim());
    state.prev = null;
    schedule(0);
  });
  document.getElementById('token-clear').addEventListener('click', () => {
    setToken('');
    input.value = '';
    schedule(0);
  });
}

if (typeof document !== 'undefined') {
  setupToken();
  schedule(0);
}
