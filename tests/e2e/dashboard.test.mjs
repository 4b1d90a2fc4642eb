// The built-in dashboard in headless Chromium against the real server.
// Two tenants send repeated prompts (so caching shows) while four tabs poll
// /dashboard: with the admin token, with each tenant's key, and with a wrong
// key. While traffic runs, every chart must draw at least two points of live
// data; once it has stopped and settled, every figure the page shows must
// equal what /dashboard/data says for the same credential. A tenant's page
// holds its own tenant id and figures only; the other tenant's id appears
// nowhere in its DOM. A wrong key shows an error and no data.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import OpenAI from 'openai';
import { launchChromium } from './chromium.mjs';
import { startServer } from './server.mjs';

let server;
let browser;
const model = 'stories260K';
const STORE = 'kvgate.dashboard.credential';
const LIMITS = ['requests', 'tokens', 'concurrent_requests', 'monthly_spend', 'kv_blocks'];
const TIERS = ['device', 'host', 'disk'];
const prompts = [
  'Once upon a time, there was a little girl named Lily. She loved to play outside in the sunshine.',
  'One day, a boy named Tom went to the park with his mom. He saw a big red ball under a tree.',
];

before(async () => {
  server = await startServer();
  browser = await launchChromium();
});
after(async () => {
  if (browser) await browser.close();
  if (server) await server.stop();
});

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function call(method, route, credential, body) {
  const r = await server.request(method, route, {
    headers: { authorization: `Bearer ${credential}`, 'content-type': 'application/json' },
    body,
  });
  return { status: r.status, headers: r.headers, json: r.body ? JSON.parse(r.body) : null };
}
const dashboardData = async (credential) => (await call('GET', '/dashboard/data', credential)).json;

// Sends one tenant's requests back to back until `stop.now`; resolves to how many.
async function traffic(key, stop, seed) {
  const client = new OpenAI({ apiKey: key, baseURL: server.baseUrl + '/v1', httpAgent: server.agent, maxRetries: 0 });
  let n = 0;
  while (!stop.now) {
    const prompt = prompts[(n + seed) % prompts.length];
    await client.completions.create({ model, prompt, max_tokens: 4 + (n % 5), temperature: 0 });
    ++n;
  }
  return n;
}

// What one tab shows: its figures, its charts, its bars, its tenant rows.
const READ_PAGE = `(() => {
  const b = document.body.dataset;
  return {
    href: location.href, scope: b.scope ?? null, ready: b.ready ?? null, error: b.error ?? null,
    polls: Number(b.polls ?? 0), stored: sessionStorage.getItem(${JSON.stringify(STORE)}),
    loginShown: !document.getElementById('login').hidden,
    loginError: document.getElementById('login-error').textContent,
    header: document.querySelector('header').textContent,
    html: document.documentElement.outerHTML,
    figures: [...document.querySelectorAll('[data-field]')].map((e) => ({
      field: e.dataset.field, tenant: e.dataset.tenant ?? null, tier: e.dataset.tier ?? null, value: e.dataset.value })),
    charts: Object.fromEntries([...document.querySelectorAll('[data-chart]')].map((c) => [c.dataset.chart, {
      points: Number(c.dataset.points), series: Number(c.dataset.series),
      lines: Object.fromEntries([...c.querySelectorAll('g[data-name]')].map((g) => [g.dataset.name,
        { nonNull: Number(g.dataset.nonnull), max: g.dataset.max === '' ? null : Number(g.dataset.max) }])),
      bars: Object.fromEntries([...c.querySelectorAll('g[data-label]')].map((g) => [g.dataset.label, g.dataset.value])),
    }])),
    rows: [...document.querySelectorAll('table[data-table=tenants] tr[data-tenant]')].map((r) => r.dataset.tenant),
  };
})()`;

// ---- what each figure must be, from the /dashboard/data answer
const num = (v) => (Number.isFinite(Number(v)) ? Number(v) : 0);
const cached = (r) => TIERS.reduce((s, t) => s + num(r.cached_tokens?.[t]), 0);
const refused = (r) => LIMITS.reduce((s, k) => s + num(r.quota_refusals?.[k]), 0);
const hitRate = (r) => (num(r.prefix_cache_queries_tokens) > 0 ? num(r.prefix_cache_hits_tokens) / num(r.prefix_cache_queries_tokens) : null);
function totals(rows) {
  const t = { cached_tokens: {}, quota_refusals: {} };
  for (const k of ['requests', 'prompt_tokens', 'fresh_prefill_tokens', 'output_tokens', 'cost_usd',
    'cost_without_cache_usd', 'prefix_cache_queries_tokens', 'prefix_cache_hits_tokens'])
    t[k] = rows.reduce((s, r) => s + num(r[k]), 0);
  for (const k of TIERS) t.cached_tokens[k] = rows.reduce((s, r) => s + num(r.cached_tokens?.[k]), 0);
  for (const k of LIMITS) t.quota_refusals[k] = rows.reduce((s, r) => s + num(r.quota_refusals?.[k]), 0);
  return t;
}
function rowFigure(r, field) {
  if (field === 'hit_rate') return hitRate(r);
  if (field === 'cached_tokens') return cached(r);
  if (field === 'saved_usd') return num(r.cost_without_cache_usd) - num(r.cost_usd);
  if (field === 'quota_refusals') return refused(r);
  if (field.startsWith('cached_tokens.')) return num(r.cached_tokens?.[field.slice(14)]);
  if (field in r) return num(r[field]);
  return undefined;
}
// Prometheus' histogram_quantile over cumulative buckets, written again here
// so the page's estimate is checked against an independent one.
function quantile(q, le, counts) {
  const total = counts.at(-1);
  if (!(total > 0)) return null;
  const rank = q * total;
  const i = counts.findIndex((c) => c >= rank);
  if (i === counts.length - 1) return le.at(-1);
  const lo = i === 0 ? 0 : le[i - 1];
  const below = i === 0 ? 0 : counts[i - 1];
  return lo + (le[i] - lo) * (rank - below) / (counts[i] - below);
}
function expected(data, f) {
  const rows = data.tenants;
  if (f.tenant !== null) {
    const r = rows.find((x) => x.tenant === f.tenant);
    return r ? rowFigure(r, f.field) : undefined;
  }
  const whole = data.scope === 'tenant' ? rows.find((x) => x.tenant === data.tenant) : totals(rows);
  let m;
  if ((m = /^latency\.(\w+)\.(count|mean|p50|p90|p99)$/.exec(f.field))) {
    const h = data.latency[m[1]];
    if (m[2] === 'count') return h.count;
    if (m[2] === 'mean') return h.count > 0 ? h.sum / h.count : null;
    return quantile({ p50: 0.5, p90: 0.9, p99: 0.99 }[m[2]], h.le, h.counts);
  }
  if ((m = /^kv\.(\w+)$/.exec(f.field))) return num(data.kv.find((k) => k.tier === f.tier)?.[m[1]]);
  if (['evictions_blocks', 'offloads_blocks', 'restores_blocks'].includes(f.field)) return num(data[f.field][f.tier]);
  if (['requests_running', 'requests_waiting', 'preemptions', 'engine_busy_refusals'].includes(f.field)) return num(data[f.field]);
  return rowFigure(whole, f.field);
}
function same(shown, want) {
  if (want === null) return shown === '';
  const v = Number(shown);
  return shown !== '' && Math.abs(v - want) <= 1e-9 * Math.max(1, Math.abs(want));
}
function assertFiguresMatch(page, data, who) {
  assert.ok(page.figures.length > 0, `${who}: the page shows figures`);
  for (const f of page.figures) {
    const want = expected(data, f);
    assert.notEqual(want, undefined, `${who}: every figure is one the test knows: ${JSON.stringify(f)}`);
    assert.ok(same(f.value, want), `${who}: ${f.field}${f.tenant ? ' of ' + f.tenant : ''}${f.tier ? ' (' + f.tier + ')' : ''} ` +
      `shows ${f.value}, /dashboard/data says ${want}`);
  }
}
const LIVE_CHARTS = { admin: ['hit-rate', 'token-rate', 'ttft', 'itl', 'tpot', 'kv-usage', 'kv-moves', 'requests'],
                      tenant: ['hit-rate', 'token-rate', 'requests'] };

test('/dashboard is one self-contained page with a strict CSP, and needs no credential', async () => {
  const r = await server.request('GET', '/dashboard');
  assert.equal(r.status, 200);
  assert.equal(r.headers['content-type'], 'text/html; charset=utf-8');
  assert.equal(r.headers['cache-control'], 'no-store');
  const csp = r.headers['content-security-policy'];
  assert.match(csp, /default-src 'none'/);
  assert.match(csp, /connect-src 'self'/);
  assert.match(csp, /script-src 'sha256-[A-Za-z0-9+/]+=*'(;|$)/);
  assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval|\*/);
  assert.doesNotMatch(r.body, /<script[^>]*\bsrc=|<link[^>]*stylesheet|@import|url\(|<iframe|<img/i, 'nothing loaded from anywhere');
  assert.equal((r.body.match(/https?:\/\/[^\s'"<>]+/g) ?? []).filter((u) => u !== 'http://www.w3.org/2000/svg').length, 0,
    'no URL but the SVG namespace');
  assert.equal((await call('GET', '/dashboard/data', 'kvg-nope')).status, 401);
  assert.equal((await server.request('GET', '/dashboard/data')).status, 401);
});

test('the dashboard draws live data for the admin and for each tenant, and only its own for a tenant', async () => {
  const t0 = Date.now();
  const other = 'tenant-b7';
  // Traffic runs back to back until the tabs have what they need: on a quiet
  // machine that is more than the demo tenant's 600 requests a minute, and
  // a 429 is not what this test is about.
  const unlimited = { requests_per_minute: 0, tokens_per_minute: 0 };
  assert.equal((await call('PATCH', '/admin/tenants/demo', server.adminToken, { quotas: unlimited })).status, 200);
  assert.equal((await call('POST', '/admin/tenants', server.adminToken, { id: other, plan_id: 'demo', quotas: unlimited }))
    .status, 201);
  const otherKey = (await call('POST', `/admin/tenants/${other}/keys`, server.adminToken, {})).json.api_key;
  const page = (await server.request('GET', '/dashboard')).body;
  for (const id of ['demo', other]) assert.ok(!page.includes(id), `the page itself never spells the tenant id ${id}`);

  const stop = { now: false };
  const sent = [traffic(server.apiKey, stop, 0), traffic(otherKey, stop, 1)];
  const url = (credential) => `${server.baseUrl}/dashboard#token=${encodeURIComponent(credential)}`;
  const wrongKey = 'kvg-' + randomBytes(24).toString('base64url');
  const tabs = {
    admin: { credential: server.adminToken },
    demo: { credential: server.apiKey, tenant: 'demo', other },
    [other]: { credential: otherKey, tenant: other, other: 'demo' },
  };
  for (const t of Object.values(tabs)) t.page = await browser.open(url(t.credential));
  const wrong = await browser.open(url(wrongKey));

  // Live: three polls while both tenants send requests give every rate chart two points.
  for (const [who, t] of Object.entries(tabs))
    await t.page.waitFor('Number(document.body.dataset.polls) >= 3', 60000, `${who}: 3 polls`);
  for (const [who, t] of Object.entries(tabs)) {
    const live = await t.page.evaluate(READ_PAGE);
    const scope = who === 'admin' ? 'admin' : 'tenant';
    assert.equal(live.scope, scope, who);
    assert.equal(live.ready, '1', `${who}: data-ready after two polls`);
    for (const c of LIVE_CHARTS[scope]) {
      assert.ok(live.charts[c], `${who}: chart ${c} is on the page`);
      assert.ok(live.charts[c].points >= 2, `${who}: chart ${c} drew ${live.charts[c].points} points of live data`);
    }
    const tokens = live.charts['token-rate'].lines;
    assert.ok(tokens['cached prompt'].max > 0 && tokens['fresh prefill'].max > 0 && tokens.generated.max > 0,
      `${who}: tokens per second moved: ${JSON.stringify(tokens)}`);
    const hit = live.charts['hit-rate'].lines[scope === 'admin' ? 'all tenants' : t.tenant];
    assert.ok(hit.nonNull >= 2 && hit.max > 0, `${who}: the hit rate is drawn and above 0: ${JSON.stringify(hit)}`);
    if (scope === 'admin') for (const c of ['ttft', 'itl', 'tpot']) assert.ok(live.charts[c].lines.p99.max > 0, `${who}: ${c} p99`);
  }

  // Settled: traffic stopped and nothing in flight. Then, for each tab, the
  // figures it shows from a poll asked between two /dashboard/data answers
  // that agree, so the page's poll saw exactly what both say.
  stop.now = true;
  const counts = await Promise.all(sent);
  assert.ok(counts.every((n) => n >= 2), `both tenants sent requests: ${counts}`);
  for (let k = 0; k < 200 && (await call('GET', '/admin/cache', server.adminToken)).json.requests_in_flight !== 0; ++k) await sleep(25);
  const still = (d) => JSON.stringify({ ...d, uptime_s: 0 });
  async function settled(who, t) {
    for (let attempt = 0; attempt < 10; ++attempt) {
      const before = await dashboardData(t.credential);
      const since = Date.now();
      await t.page.waitFor(`Number(document.body.dataset.polledAt) > ${since}`, 30000, `${who}: a poll after ${since}`);
      const shown = await t.page.evaluate(READ_PAGE);
      const data = await dashboardData(t.credential);
      if (still(before) === still(data)) return { shown, data };
    }
    throw new Error(`${who}: /dashboard/data never held still`);
  }
  const views = await Promise.all(Object.entries(tabs).map(([who, t]) => settled(who, t)));

  for (const [i, [who, t]] of Object.entries(tabs).entries()) {
    const { shown, data } = views[i];
    assert.equal(shown.href, `${server.baseUrl}/dashboard`, `${who}: the credential left the address bar`);
    assert.equal(shown.stored, t.credential, `${who}: the credential is kept in the tab's sessionStorage`);
    assert.deepEqual(t.page.problems, [], `${who}: no script error and no CSP violation`);
    assertFiguresMatch(shown, data, who);
    const bars = (chart) => shown.charts[chart].bars;
    if (who === 'admin') {
      assert.equal(data.scope, 'admin');
      assert.deepEqual(shown.rows.slice().sort(), data.tenants.map((r) => r.tenant).sort(), 'admin: every tenant has its row');
      assert.deepEqual(shown.rows.slice().sort(), ['demo', other].sort());
      for (const r of data.tenants) {
        assert.ok(cached(r) > 0, `${r.tenant} was served from the cache`);
        assert.ok(same(bars('tenant-hit-rate')[r.tenant], hitRate(r)), `admin: hit-rate bar of ${r.tenant}`);
        assert.ok(same(bars('tenant-cached')[r.tenant], cached(r)), `admin: cached bar of ${r.tenant}`);
        assert.ok(same(bars('tenant-cost')[r.tenant], r.cost_usd), `admin: cost bar of ${r.tenant}`);
      }
      for (const k of LIMITS) assert.ok(same(bars('refusals')[k.replace(/_/g, ' ')], totals(data.tenants).quota_refusals[k]));
      assert.ok(same(bars('refusals')['engine busy (503)'], data.engine_busy_refusals));
      for (const k of data.kv) assert.ok(same(bars('kv-blocks')[k.tier], k.blocks_total));
      // The page's quantile estimate on hand-worked buckets, as histogram_quantile gives them.
      const q = await t.page.evaluate(`[0.1, 0.5, 0.95, 0.75].map((q) => window.kvgateDashboard.quantile(q, [1, 2, 4], [2, 6, 8, 10]))
        .concat([window.kvgateDashboard.quantile(0.5, [1], [0, 0])])`);
      assert.deepEqual(q, [0.5, 1.75, 4, 3.5, null]);
    } else {
      assert.equal(data.scope, 'tenant');
      assert.equal(data.tenant, t.tenant);
      assert.deepEqual(shown.rows, [t.tenant], `${who}: its own row alone`);
      assert.ok(shown.header.includes(`tenant ${t.tenant}`), `${who}: the header names it`);
      assert.ok(!shown.html.includes(t.other), `${who}: the other tenant's id (${t.other}) appears nowhere in the DOM`);
      for (const c of ['ttft', 'kv-blocks', 'tenant-cost', 'latency']) assert.ok(!shown.charts[c], `${who}: no server chart ${c}`);
      const own = data.tenants[0];
      assert.ok(cached(own) > 0, `${who} was served from the cache`);
      for (const tier of TIERS) assert.ok(same(bars('cached-by-tier')[tier], num(own.cached_tokens[tier])), `${who}: ${tier} bar`);
      assert.ok(same(bars('cost').billed, own.cost_usd));
      assert.ok(same(bars('cost')['without cache'], own.cost_without_cache_usd));
      assert.ok(same(bars('cost')['saved by caching'], own.cost_without_cache_usd - own.cost_usd));
      assert.ok(own.cost_without_cache_usd > own.cost_usd, `${who}: caching saved it something`);
    }
  }

  const w = await wrong.evaluate(READ_PAGE);
  assert.equal(w.error, '401', 'a wrong key: the page says the server refused it');
  assert.equal(w.ready, null);
  assert.equal(w.polls, 0);
  assert.ok(w.loginShown && /refused this credential \(401/.test(w.loginError), w.loginError);
  assert.equal(w.stored, null, 'a refused key is not kept');
  assert.deepEqual(w.figures, [], 'a wrong key shows no figure');
  assert.deepEqual(Object.keys(w.charts), [], 'and no chart');
  assert.equal(w.href, `${server.baseUrl}/dashboard`);
  for (const id of ['demo', other]) assert.ok(!w.html.includes(id));
  assert.ok(wrong.problems.every((p) => /status of 401/.test(p)), wrong.problems.join('\n'));

  for (const t of Object.values(tabs)) await t.page.close();
  await wrong.close();
  console.log(`dashboard e2e: ${counts[0] + counts[1]} requests, ${Date.now() - t0} ms`);
});
