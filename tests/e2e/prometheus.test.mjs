// /metrics against the real tools: kvgate serve's exposition, read before
// and after single requests (each counter moves by exactly what the
// request's usage says; a quota refusal adds exactly one), totals equal to
// the ledger's, `promtool check metrics` on it, every family of
// docs/metrics.md with its type and labels, and a real Prometheus (Debian's)
// scraping two servers on loopback, one over HTTPS with the admin token and
// one on its own plain-HTTP metrics listener, answering every PromQL query
// of the Grafana dashboard (ops/grafana/kvgate.json) with data.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import OpenAI from 'openai';
import { familyOf, parseExposition, select, sum } from './prom_text.mjs';
import { startServer } from './server.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const dashboardFile = path.join(here, '../../ops/grafana/kvgate.json');
const model = 'stories260K';
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// docs/metrics.md, the families table: type and label names.
const families = {
  kvgate_requests_total: ['counter', ['tenant', 'model', 'finish_reason']],
  kvgate_prompt_tokens_total: ['counter', ['tenant', 'model']],
  kvgate_cached_prompt_tokens_total: ['counter', ['tenant', 'model', 'tier']],
  kvgate_fresh_prefill_tokens_total: ['counter', ['tenant', 'model']],
  kvgate_output_tokens_total: ['counter', ['tenant', 'model']],
  kvgate_cost_usd_total: ['counter', ['tenant']],
  kvgate_cost_without_cache_usd_total: ['counter', ['tenant']],
  kvgate_prefix_cache_queries_tokens_total: ['counter', ['tenant']],
  kvgate_prefix_cache_hits_tokens_total: ['counter', ['tenant']],
  kvgate_time_to_first_token_seconds: ['histogram', ['model']],
  kvgate_inter_token_latency_seconds: ['histogram', ['model']],
  kvgate_time_per_output_token_seconds: ['histogram', ['model']],
  kvgate_e2e_request_latency_seconds: ['histogram', ['model']],
  kvgate_request_queue_time_seconds: ['histogram', ['model']],
  kvgate_kv_blocks: ['gauge', ['tier', 'state']],
  kvgate_kv_usage_ratio: ['gauge', ['tier']],
  kvgate_kv_capacity_bytes: ['gauge', ['tier']],
  kvgate_kv_pinned_blocks: ['gauge', ['tier']],
  kvgate_eviction_policy_info: ['gauge', ['tier', 'policy']],
  kvgate_requests_running: ['gauge', []],
  kvgate_requests_waiting: ['gauge', []],
  kvgate_preemptions_total: ['counter', []],
  kvgate_ledger_pending_records: ['gauge', []],
  kvgate_ledger_held_records_total: ['counter', []],
  kvgate_ledger_dropped_records_total: ['counter', []],
  kvgate_ledger_commits_total: ['counter', []],
  kvgate_ledger_records_total: ['counter', []],
  kvgate_kv_evictions_blocks_total: ['counter', ['tier']],
  kvgate_kv_offloads_blocks_total: ['counter', ['tier']],
  kvgate_kv_offloads_bytes_total: ['counter', ['tier']],
  kvgate_kv_restores_blocks_total: ['counter', ['tier']],
  kvgate_kv_restores_bytes_total: ['counter', ['tier']],
  kvgate_kv_tier_faults_total: ['counter', ['tier', 'reason']],
  kvgate_kv_tier_refused_blocks_total: ['counter', ['tier']],
  kvgate_kv_tier_write_errors_total: ['counter', ['tier']],
  kvgate_kv_persisted_blocks_total: ['counter', []],
  kvgate_kv_tier_tenant_blocks: ['gauge', ['tier', 'tenant']],
  kvgate_preempted_resume_tokens_total: ['counter', ['how']],
  kvgate_quota_refusals_total: ['counter', ['tenant', 'limit']],
  kvgate_tool_calls_total: ['counter', ['tenant', 'parser', 'outcome']],
  kvgate_structured_output_requests_total: ['counter', ['tenant', 'kind']],
  kvgate_engine_busy_refusals_total: ['counter', []],
};
const labelValues = {
  tier: ['device', 'host', 'disk'],
  finish_reason: ['stop', 'length', 'cancelled', 'error'],
  limit: ['requests', 'tokens', 'concurrent_requests', 'monthly_spend', 'kv_blocks'],
  state: ['in_use', 'cached', 'free'],
  reason: ['truncated', 'bad_magic', 'header_checksum', 'payload_checksum', 'wrong_model', 'wrong_layout',
    'wrong_block_size', 'wrong_type', 'wrong_key', 'wrong_tokens'],
  how: ['restored', 'recomputed'],
  parser: ['hermes', 'llama3', 'generic'],
  outcome: ['calls', 'text', 'unparsed'],
};
const ttftBuckets = [0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80,
  160, 640, 2560];
const tokenBuckets = [0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80];
const requestBuckets = [0.3, 0.5, 0.8, 1, 1.5, 2, 2.5, 5, 10, 15, 20, 30, 40, 50, 60, 120, 240, 480, 960, 1920, 7680];
const buckets = {
  kvgate_time_to_first_token_seconds: ttftBuckets,
  kvgate_inter_token_latency_seconds: tokenBuckets,
  kvgate_time_per_output_token_seconds: tokenBuckets,
  kvgate_e2e_request_latency_seconds: requestBuckets,
  kvgate_request_queue_time_seconds: requestBuckets,
};

// Prices with whole micro-dollars per token, so that costs are exact:
// 10 fresh, 1 cached, 30 output; what a cached token saves is 9.
const plan = { fresh_input_per_mtok: 10_000_000, cached_input_per_mtok: 1_000_000, cache_write_per_mtok: 0,
  output_per_mtok: 30_000_000 };
const savedPerCachedToken = 9;

const prompts = [
  'Once upon a time, there was a little girl named Lily. She loved to play outside in the sunshine with her dog.',
  'One day, a boy named Tom went to the park with his mom. He saw a big red ball under a tall green tree.',
  'The cat sat on the mat and looked at the bird in the sky. The bird sang a happy song for the cat.',
];

let api;       // kvgate serve, /metrics on the API listener behind the admin token
let listener;  // kvgate serve --metrics-listen 127.0.0.1:0
let listenerMetricsUrl;
let prometheus;
let work;      // a temporary folder: Prometheus's config, token file and data
const tenants = {};   // id → {id, key, client}
const served = [];    // {tenant, id}: every request the API server answered with 200
let loadEnd = 0;
const cleanups = [];

function which(program) {
  for (const dir of (process.env.PATH ?? '/usr/bin').split(':')) {
    const p = path.join(dir, program);
    if (existsSync(p)) return p;
  }
  // Never skipped: without the tool the test fails and says why.
  throw new Error(`${program} is missing: run ops/deps (Debian's prometheus package)`);
}

async function admin(method, route, body) {
  const r = await api.request(method, route, {
    headers: { authorization: `Bearer ${api.adminToken}`, 'content-type': 'application/json' },
    body,
  });
  return { status: r.status, json: r.body ? JSON.parse(r.body) : null };
}

async function newTenant(id, quotas = {}) {
  const t = await admin('POST', '/admin/tenants', { id, plan_id: 'prom', quotas });
  assert.equal(t.status, 201, JSON.stringify(t.json));
  const key = await admin('POST', `/admin/tenants/${id}/keys`, { label: 'e2e' });
  assert.equal(key.status, 201);
  const client = new OpenAI({ apiKey: key.json.api_key, baseURL: api.baseUrl + '/v1', httpAgent: api.agent,
    maxRetries: 0 });
  tenants[id] = { id, key: key.json.api_key, client };
  return tenants[id];
}

async function exposition() {
  const r = await api.request('GET', '/metrics', { headers: { authorization: `Bearer ${api.adminToken}` } });
  assert.equal(r.status, 200, r.body);
  return { text: r.body, contentType: r.headers['content-type'], ...parseExposition(r.body) };
}

// One request; resolves to {id, usage} as its client saw them, or
// {refused: status} for a 429.
async function send(tenant, { prompt, chat = false, stream = false, maxTokens = 8, tools, toolChoice }) {
  const body = chat
    ? { model, messages: [{ role: 'user', content: prompt }], max_tokens: maxTokens, temperature: 0 }
    : { model, prompt, max_tokens: maxTokens, temperature: 0 };
  if (tools) body.tools = tools;
  if (toolChoice) body.tool_choice = toolChoice;
  if (stream) Object.assign(body, { stream: true, stream_options: { include_usage: true } });
  const endpoint = chat ? tenant.client.chat.completions : tenant.client.completions;
  let res;
  try {
    res = await endpoint.create(body).withResponse();
  } catch (e) {
    if (e instanceof OpenAI.RateLimitError) return { refused: e.status };
    throw e;
  }
  const id = res.response.headers.get('x-request-id');
  let usage = res.data.usage;
  if (stream) {
    for await (const chunk of res.data) if (chunk.usage) usage = chunk.usage;
  }
  assert.ok(id, 'every response has an x-request-id');
  assert.ok(usage, 'every response has its usage');
  served.push({ tenant: tenant.id, id });
  return { id, usage };
}

// The exposition after a request, once `moved` says its counters are in.
// They are counted when the request ends, which is around when its client
// gets the usage; allow a moment, then compare exactly.
async function exposeAfter(moved) {
  let e;
  for (let i = 0; i < 40; ++i) {
    e = await exposition();
    if (moved(e)) return e;
    await sleep(50);
  }
  return e;
}

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

async function startPrometheus(config) {
  const binary = which('prometheus');
  const configFile = path.join(work, 'prometheus.yml');
  writeFileSync(configFile, JSON.stringify(config, null, 2));  // JSON is YAML
  for (let attempt = 0; ; ++attempt) {
    const port = await freePort();
    const log = [];
    const child = spawn(binary, [`--config.file=${configFile}`, `--storage.tsdb.path=${path.join(work, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`, '--web.enable-lifecycle', '--log.level=warn'],
    { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.on('data', (d) => log.push(String(d)));
    child.stderr.on('data', (d) => log.push(String(d)));
    let exited = null;
    const exit = new Promise((r) => child.once('exit', (code, signal) => r((exited = code ?? signal))));
    const killOnExit = () => child.kill('SIGKILL');
    process.once('exit', killOnExit);
    const p = {
      url: `http://127.0.0.1:${port}`,
      log,
      async stop() {
        process.removeListener('exit', killOnExit);
        if (exited !== null) return;
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
        await exit;
        clearTimeout(timer);
      },
    };
    for (let i = 0; i < 200 && exited === null; ++i) {
      try {
        if ((await fetch(p.url + '/-/ready')).ok) return p;
      } catch {
        // not listening yet
      }
      await sleep(50);
    }
    await p.stop();
    if (attempt === 2) throw new Error('prometheus did not start:\n' + log.join(''));
  }
}

async function promApi(route, params = {}) {
  const r = await fetch(`${prometheus.url}/api/v1/${route}?${new URLSearchParams(params)}`);
  const body = await r.json();
  assert.equal(body.status, 'success', `${route} ${JSON.stringify(params)}: ${JSON.stringify(body)}`);
  return body.data;
}

before(async () => {
  work = mkdtempSync(path.join(tmpdir(), 'kvgate-prometheus-'));
  cleanups.push(() => rmSync(work, { recursive: true, force: true }));
  api = await startServer();
  cleanups.push(async () => assert.equal(await api.stop(), 0, 'SIGTERM ends the server cleanly'));
  listener = await startServer(['--metrics-listen', '127.0.0.1:0']);
  cleanups.push(async () => assert.equal(await listener.stop(), 0, 'SIGTERM ends the server cleanly'));
  for (let i = 0; i < 200 && !listenerMetricsUrl; ++i) {
    const line = listener.lines.find((l) => /metrics on http:\/\/127\.0\.0\.1:\d+\/metrics/.test(l));
    if (line) listenerMetricsUrl = line.match(/(http:\/\/127\.0\.0\.1:\d+\/metrics)/)[1];
    else await sleep(50);
  }
  assert.ok(listenerMetricsUrl, 'kvgate prints where its metrics listener is:\n' + listener.lines.join('\n'));
  // ... and where its dashboard is, on the API listener.
  assert.ok(api.lines.some((l) => /dashboard on https:\/\/127\.0\.0\.1:\d+\/dashboard /.test(l)), api.lines.join('\n'));

  const plans = await admin('PUT', '/admin/plans/prom', plan);
  assert.ok(plans.status === 200 || plans.status === 201, JSON.stringify(plans.json));
  await newTenant('alpha');
  await newTenant('beta');
  await newTenant('tight', { requests_per_minute: 1 });
  await newTenant('small', { tokens_per_minute: 40 });

  // Prometheus first: its discovery takes about five seconds to hand the
  // scraper its targets, and the single-request tests run meanwhile.
  const tokenFile = path.join(work, 'admin-token');
  writeFileSync(tokenFile, api.adminToken, { mode: 0o600 });
  prometheus = await startPrometheus({
    global: { scrape_interval: '1s', scrape_timeout: '1s', evaluation_interval: '1s' },
    scrape_configs: [
      {
        job_name: 'kvgate',
        scheme: 'https',
        metrics_path: '/metrics',
        authorization: { type: 'Bearer', credentials_file: tokenFile },
        tls_config: { ca_file: api.certFile },
        static_configs: [{ targets: [new URL(api.baseUrl).host] }],
      },
      {
        job_name: 'kvgate-metrics-listener',
        metrics_path: '/metrics',
        static_configs: [{ targets: [new URL(listenerMetricsUrl).host] }],
      },
    ],
  });
  cleanups.push(() => prometheus.stop());
});

after(async () => {
  // Whatever happened: Prometheus, both servers and the folder go.
  let first = null;
  for (const f of cleanups.reverse()) {
    try {
      await f();
    } catch (e) {
      first ??= e;
    }
  }
  if (first) throw first;
});

test('/metrics on the API listener: the admin token only, text format 0.0.4', async () => {
  assert.equal((await api.request('GET', '/metrics')).status, 401, 'no credential');
  const tenant = await api.request('GET', '/metrics', { headers: { authorization: `Bearer ${tenants.alpha.key}` } });
  assert.equal(tenant.status, 403, "a tenant's key");
  const e = await exposition();
  assert.match(e.contentType, /^text\/plain; version=0\.0\.4/);
  assert.equal(e.families.get('kvgate_requests_total')?.type, 'counter');
});

test('/metrics on its own listener: no token, /health, and nothing else', async () => {
  const r = await fetch(listenerMetricsUrl);
  assert.equal(r.status, 200);
  assert.match(r.headers.get('content-type'), /^text\/plain; version=0\.0\.4/);
  const e = parseExposition(await r.text());
  assert.equal(e.families.get('kvgate_requests_total')?.type, 'counter');
  const base = new URL(listenerMetricsUrl).origin;
  assert.equal((await fetch(base + '/health')).status, 200);
  assert.equal((await fetch(base + '/v1/models')).status, 404);
  assert.equal((await fetch(base + '/admin/tenants')).status, 404);
});

test('a request moves each counter by exactly what its usage says', async () => {
  const alpha = tenants.alpha;
  const prompt = prompts[0] + ' Then she went home.';
  const one = { tenant: 'alpha' };
  const oneModel = { tenant: 'alpha', model };
  // The first asks fresh; the second, streamed, hits the blocks the first left.
  for (const [i, opts] of [{ prompt }, { prompt, stream: true }].entries()) {
    const before = await exposition();
    const r = await send(alpha, { ...opts, maxTokens: 8 });
    const u = r.usage;
    const requests = (e) => sum(e, 'kvgate_requests_total', one);
    const after = await exposeAfter((e) => requests(e) > requests(before));
    const d = (name, match = oneModel) => sum(after, name, match) - sum(before, name, match);
    const cached = u.prompt_tokens_details?.cached_tokens ?? 0;
    if (i === 1) assert.ok(cached > 0, 'the repeat hits the cache');
    const rec = (await admin('GET', `/admin/requests/${r.id}`)).json;

    assert.equal(d('kvgate_requests_total'), 1);
    assert.equal(d('kvgate_requests_total', { ...oneModel, finish_reason: rec.finish_reason }), 1, rec.finish_reason);
    assert.equal(d('kvgate_prompt_tokens_total'), u.prompt_tokens);
    assert.equal(d('kvgate_cached_prompt_tokens_total', { ...oneModel, tier: 'device' }), cached);
    assert.equal(d('kvgate_cached_prompt_tokens_total'), cached, 'no other tier');
    assert.equal(d('kvgate_fresh_prefill_tokens_total'), u.kvgate.fresh_prefill_tokens);
    assert.equal(d('kvgate_output_tokens_total'), u.completion_tokens);
    assert.equal(d('kvgate_prefix_cache_queries_tokens_total', one), u.prompt_tokens);
    assert.equal(d('kvgate_prefix_cache_hits_tokens_total', one), cached);
    // Dollars as a float: compared in micro-dollars, as the ledger keeps them.
    const cost = Math.round(d('kvgate_cost_usd_total', one) * 1e6);
    const without = Math.round(d('kvgate_cost_without_cache_usd_total', one) * 1e6);
    assert.equal(cost, u.kvgate.cost_micros);
    assert.equal(cost, rec.cost_micros);
    assert.equal(without - cost, savedPerCachedToken * cached, 'saved: every cached token priced fresh');
    // One observation each per request; a gap between each two output tokens.
    const m = { model };
    assert.equal(d('kvgate_time_to_first_token_seconds_count', m), 1);
    assert.equal(d('kvgate_e2e_request_latency_seconds_count', m), 1);
    assert.equal(d('kvgate_request_queue_time_seconds_count', m), 1);
    assert.equal(d('kvgate_time_per_output_token_seconds_count', m), u.completion_tokens > 1 ? 1 : 0);
    assert.equal(d('kvgate_inter_token_latency_seconds_count', m), u.completion_tokens - 1);
    assert.equal(d('kvgate_quota_refusals_total', {}), 0);
  }
});

test('a quota refusal raises kvgate_quota_refusals_total by exactly one', async () => {
  const refusals = (e) => sum(e, 'kvgate_quota_refusals_total', {});
  // tight: one request a minute; the second is refused by `requests`.
  assert.ok((await send(tenants.tight, { prompt: 'Once upon a time', maxTokens: 4 })).usage);
  for (const [tenant, limit, req] of [
    ['tight', 'requests', { prompt: 'Once upon a time', maxTokens: 4 }],
    // small: 40 tokens a minute; prompt + max_tokens never fits.
    ['small', 'tokens', { prompt: 'Once upon a time', maxTokens: 64 }],
  ]) {
    const before = await exposition();
    assert.equal((await send(tenants[tenant], req)).refused, 429, `${tenant} is refused`);
    const after = await exposeAfter((e) => refusals(e) > refusals(before));
    const d = (name, match) => sum(after, name, match) - sum(before, name, match);
    assert.equal(d('kvgate_quota_refusals_total', { tenant, limit }), 1, `${tenant} by ${limit}`);
    assert.equal(d('kvgate_quota_refusals_total', {}), 1, 'and nothing else');
    assert.equal(d('kvgate_requests_total', { tenant }), 0, 'the engine never saw it');
    assert.equal(d('kvgate_prompt_tokens_total', { tenant }), 0);
    assert.equal(d('kvgate_cost_usd_total', { tenant }), 0);
    assert.equal(d('kvgate_engine_busy_refusals_total', {}), 0);
  }
});

// Prometheus's targets, once each has been scraped `n` times since `sinceMs`.
async function scrapedSince(sinceMs, n) {
  let counts = {};
  for (let i = 0; i < 300; ++i) {
    const series = await promApi('query', { query: 'up[1m]' });
    counts = Object.fromEntries(series.result.map((r) =>
      [r.metric.job, r.values.filter(([ts, up]) => ts * 1000 > sinceMs && up === '1').length]));
    if (counts.kvgate >= n && counts['kvgate-metrics-listener'] >= n) return;
    await sleep(100);
  }
  const { activeTargets } = await promApi('targets');
  assert.fail(`not scraped ${n} times: ${JSON.stringify(counts)} ${JSON.stringify(activeTargets)}`);
}

test('load from two tenants: per-tenant counters equal the ledger', async () => {
  // Prometheus scrapes while the load runs, so that its rates see it.
  await scrapedSince(0, 1);
  // Four at a time; prompts repeat so their prefixes hit; completions and
  // chat, streamed and not; and one more refusal.
  const jobs = [];
  for (let i = 0; i < 24; ++i) {
    jobs.push([tenants[i % 2 ? 'beta' : 'alpha'],
      { prompt: prompts[i % 3], chat: i % 4 >= 2, stream: i % 2 === 0, maxTokens: 6 + (i % 5) * 2 }]);
  }
  jobs.push([tenants.tight, { prompt: 'Once upon a time', maxTokens: 4 }]);
  const results = [];
  for (let i = 0; i < jobs.length; i += 4) {
    results.push(...(await Promise.all(jobs.slice(i, i + 4).map(([t, o]) => send(t, o)))));
  }
  assert.equal(results.at(-1).refused, 429);
  assert.ok(results.some((r) => (r.usage?.prompt_tokens_details?.cached_tokens ?? 0) > 0), 'prefixes hit');
  for (let k = 0; k < 200; ++k) {
    if ((await admin('GET', '/admin/cache')).json.requests_in_flight === 0) break;
    await sleep(25);
  }
  loadEnd = Date.now();

  const e = await exposition();
  const records = new Map();
  for (const s of served) {
    const rec = await admin('GET', `/admin/requests/${s.id}`);
    assert.equal(rec.status, 200, `request ${s.id} has a ledger record`);
    assert.equal(rec.json.tenant_id, s.tenant);
    records.set(s.tenant, [...(records.get(s.tenant) ?? []), rec.json]);
  }
  let costSum = 0;
  let costMetric = 0;
  for (const t of Object.values(tenants)) {
    const recs = records.get(t.id) ?? [];
    const total = (f) => recs.reduce((a, r) => a + r[f], 0);
    const usage = await api.request('GET', '/v1/usage', { headers: { authorization: `Bearer ${t.key}` } });
    const u = JSON.parse(usage.body);
    const one = { tenant: t.id };
    const cost = Math.round(sum(e, 'kvgate_cost_usd_total', one) * 1e6);
    assert.equal(cost, total('cost_micros'), `${t.id}: kvgate_cost_usd_total is the sum of its ledger records`);
    assert.equal(cost, u.cost_micros, `${t.id}: and its /v1/usage`);
    assert.deepEqual(
      [sum(e, 'kvgate_requests_total', one), sum(e, 'kvgate_prompt_tokens_total', one),
        sum(e, 'kvgate_cached_prompt_tokens_total', one), sum(e, 'kvgate_fresh_prefill_tokens_total', one),
        sum(e, 'kvgate_output_tokens_total', one), sum(e, 'kvgate_prefix_cache_hits_tokens_total', one)],
      [u.requests, u.prompt_tokens, u.cached_tokens, u.fresh_prefill_tokens, u.completion_tokens, u.cached_tokens],
      `${t.id}: requests and tokens as the ledger`);
    assert.equal(Math.round(sum(e, 'kvgate_cost_without_cache_usd_total', one) * 1e6) - cost,
      savedPerCachedToken * u.cached_tokens, `${t.id}: saved by caching`);
    costSum += total('cost_micros');
    costMetric += cost;
  }
  assert.equal(costMetric, costSum, "the sum of per-tenant cost is the ledger's");
  assert.equal(sum(e, 'kvgate_quota_refusals_total', { tenant: 'tight', limit: 'requests' }), 2);
  assert.equal(sum(e, 'kvgate_requests_running', {}), 0);
  assert.equal(sum(e, 'kvgate_kv_blocks', { tier: 'device', state: 'in_use' }), 0, 'every block released');
});

test('promtool check metrics accepts both expositions', async () => {
  const promtool = which('promtool');
  const texts = [
    ['API listener', (await exposition()).text],
    ['metrics listener', await (await fetch(listenerMetricsUrl)).text()],
  ];
  for (const [where, text] of texts) {
    const r = spawnSync(promtool, ['check', 'metrics'], { input: text, encoding: 'utf8' });
    assert.equal(r.error, undefined);
    assert.equal((r.stdout + r.stderr).trim(), '', `${where}: promtool's lint problems`);
    assert.equal(r.status, 0, `${where}: promtool's exit status`);
  }
});

test('every family of docs/metrics.md, with its type, labels and buckets', async () => {
  // A chat with a forced tool call, so the tool-reply and structured-output
  // families have samples (read by the generic parser).
  await send(await newTenant('agent'), { prompt: 'Weather?', chat: true, maxTokens: 100, toolChoice: 'required',
    tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string', maxLength: 8 } }, required: ['city'], additionalProperties: false } } }] });
  const e = await exposition();
  const problems = [];
  for (const [name, [type, labels]] of Object.entries(families)) {
    const f = e.families.get(name);
    if (!f) { problems.push(`${name}: no # TYPE line`); continue; }
    if (f.type !== type) problems.push(`${name}: type ${f.type}, not ${type}`);
    if (!f.help) problems.push(`${name}: no # HELP text`);
    const samples = e.samples.filter((s) => familyOf(e, s.name) === name);
    if (!samples.length) problems.push(`${name}: no sample`);
    for (const s of samples) {
      const want = [...labels, ...(s.name.endsWith('_bucket') && type === 'histogram' ? ['le'] : [])].sort();
      const got = Object.keys(s.labels).sort();
      if (want.join() !== got.join()) problems.push(`${s.name}: labels {${got}}, not {${want}}`);
      for (const [k, v] of Object.entries(s.labels)) {
        if (labelValues[k] && !labelValues[k].includes(v)) problems.push(`${s.name}: ${k}="${v}"`);
      }
      if (s.labels.model !== undefined && s.labels.model !== model) {
        problems.push(`${s.name}: model="${s.labels.model}"`);
      }
    }
    if (type === 'histogram') {
      const les = select(e, `${name}_bucket`, { model })
        .map((s) => (s.labels.le === '+Inf' ? Infinity : Number(s.labels.le)));
      if (les.join() !== [...buckets[name], Infinity].join()) problems.push(`${name}: buckets ${les}`);
    }
  }
  for (const state of labelValues.state) {
    if (!select(e, 'kvgate_kv_blocks', { tier: 'device', state }).length) {
      problems.push(`kvgate_kv_blocks: no state="${state}"`);
    }
  }
  for (const f of e.families.keys()) {
    if (f.startsWith('kvgate_') && !families[f]) problems.push(`${f}: not in docs/metrics.md`);
  }
  assert.deepEqual(problems, []);
  // --kv-budget 64MiB, rounded down to whole blocks.
  const capacity = sum(e, 'kvgate_kv_capacity_bytes', { tier: 'device' });
  const blocks = sum(e, 'kvgate_kv_blocks', { tier: 'device' });
  assert.ok(capacity > 0 && capacity <= 64 * 1024 * 1024, `capacity ${capacity}`);
  assert.ok(blocks > 0 && capacity % blocks === 0, `${capacity} bytes in ${blocks} blocks`);
});

function dashboardTargets() {
  const d = JSON.parse(readFileSync(dashboardFile, 'utf8'));
  const out = [];
  const walk = (panels) => {
    for (const p of panels ?? []) {
      if (p.type === 'row') { walk(p.panels); continue; }
      assert.ok(p.targets?.length, `panel "${p.title}" has a query`);
      for (const t of p.targets) out.push({ panel: p.title, expr: t.expr, datasource: t.datasource ?? p.datasource });
    }
  };
  walk(d.panels);
  return { d, targets: out };
}

test('the dashboard: a datasource variable and a tenant variable', () => {
  const { d, targets } = dashboardTargets();
  assert.ok(d.schemaVersion >= 36);
  const vars = Object.fromEntries(d.templating.list.map((v) => [v.name, v]));
  assert.equal(vars.datasource.type, 'datasource');
  assert.equal(vars.datasource.query, 'prometheus');
  assert.equal(vars.tenant.definition, 'label_values(kvgate_requests_total, tenant)');
  assert.equal(vars.tenant.allValue, '.*');
  for (const t of targets) assert.deepEqual(t.datasource, { type: 'prometheus', uid: '${datasource}' }, t.panel);
});

test('Prometheus scrapes both listeners, and every dashboard query returns data', async (t) => {
  // Scraped during the load and twice since it ended, so that every series
  // the load made has at least two samples for rate().
  await scrapedSince(loadEnd, 2);
  const targets = (await promApi('targets')).activeTargets;
  const byJob = Object.fromEntries(targets.map((t) => [t.labels.job, t]));
  for (const job of ['kvgate', 'kvgate-metrics-listener']) {
    assert.equal(byJob[job]?.health, 'up', `${job}: ${JSON.stringify(byJob[job] ?? targets)}`);
  }
  assert.ok(byJob.kvgate.scrapeUrl.startsWith('https://'), byJob.kvgate.scrapeUrl);
  assert.ok(byJob['kvgate-metrics-listener'].scrapeUrl.startsWith('http://'));

  // The tenant variable's query, as Grafana asks it.
  const tenantValues = await promApi('label/tenant/values', { 'match[]': 'kvgate_requests_total' });
  for (const t of ['alpha', 'beta', 'tight']) assert.ok(tenantValues.includes(t), `${t} in ${tenantValues}`);

  const { targets: queries } = dashboardTargets();
  const empty = [];
  for (const q of queries) {
    const expr = q.expr.replaceAll('$__rate_interval', '1m').replaceAll('$__range', '5m')
      .replaceAll('$__interval', '15s').replace(/\$\{tenant(:\w+)?\}|\$tenant\b/g, '.*');
    assert.ok(!expr.includes('$'), `"${q.panel}": a variable left in ${expr}`);
    const data = await promApi('query', { query: expr });
    const values = data.result.map((r) => Number(r.value[1]));
    t.diagnostic(`${values.length} series, first ${values[0]}: ${expr}`);
    if (!values.some(Number.isFinite)) empty.push(`"${q.panel}": ${expr} → ${JSON.stringify(data.result)}`);
  }
  assert.deepEqual(empty, [], 'queries without a number');
});
