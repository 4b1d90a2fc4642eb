// kvgatectl, the admin CLI, against the real server: every subcommand is
// run as a child process and its effect is checked through the server
// itself (the openai client on /v1, the admin routes, /metrics), not
// through what kvgatectl says about it. Also its exit statuses: 0 ok,
// 1 the server said no, 2 usage error, 3 cannot reach the server,
// 4 the admin token refused.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import OpenAI from 'openai';
import { startServer } from './server.mjs';

// Beside kvgate in the build tree unless ctest says where.
const ctlBinary = process.env.KVGATECTL_BINARY ??
  (process.env.KVGATE_BINARY && path.join(path.dirname(process.env.KVGATE_BINARY), '../ops/kvgatectl/kvgatectl'));
const model = 'stories260K';
const story = 'Once upon a time, there was a little girl named Lily. She loved to play outside in the sunshine ' +
  'with her dog and her friends, and every day she went to the park to look at the flowers and the birds.';

let server;
let scratch;

before(async () => {
  assert.ok(ctlBinary, 'KVGATECTL_BINARY (or KVGATE_BINARY) is set');
  server = await startServer();
  scratch = mkdtempSync(path.join(tmpdir(), 'kvgatectl-e2e-'));
});
after(async () => {
  if (scratch) rmSync(scratch, { recursive: true, force: true });
  if (server) assert.equal(await server.stop(), 0);
});

// Runs kvgatectl; by default pointed at the server through its environment
// variables. Resolves to its exit status and output, never rejects.
function ctl(args, { env } = {}) {
  const base = { PATH: process.env.PATH };
  const useEnv = env ?? {
    KVGATE_SERVER: server.baseUrl, KVGATE_ADMIN_TOKEN: server.adminToken, KVGATE_CACERT: server.certFile,
  };
  return new Promise((resolve) => {
    execFile(ctlBinary, args, { env: { ...base, ...useEnv }, timeout: 60000 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr });
    });
  });
}

async function ok(args) {
  const r = await ctl(args);
  assert.equal(r.code, 0, `kvgatectl ${args.join(' ')} failed:\n${r.stderr}`);
  return r.stdout;
}

async function okJson(args) {
  return JSON.parse(await ok([...args, '--json']));
}

async function fails(args, code, pattern, opts) {
  const r = await ctl(args, opts);
  assert.equal(r.code, code, `kvgatectl ${args.join(' ')}: exit ${r.code}, stderr:\n${r.stderr}`);
  if (pattern) assert.match(r.stderr, pattern);
  if (code !== 2) assert.match(r.stderr, /^kvgatectl: error: /m);
  return r;
}

// The admin API directly, to check effects without kvgatectl.
async function admin(method, route, body) {
  const r = await server.request(method, route, {
    headers: { authorization: `Bearer ${server.adminToken}`, 'content-type': 'application/json' }, body });
  return { status: r.status, body: r.body, json: r.headers['content-type']?.includes('json') ? JSON.parse(r.body) : null };
}

function clientFor(apiKey) {
  return new OpenAI({ apiKey, baseURL: server.baseUrl + '/v1', httpAgent: server.agent, maxRetries: 0 });
}

function complete(client, prompt = 'Once upon a time', maxTokens = 4) {
  return client.completions.create({ model, prompt, max_tokens: maxTokens, temperature: 0 });
}

const cached = (r) => r.usage.prompt_tokens_details?.cached_tokens ?? 0;

// A tenant and a key, made with kvgatectl.
async function newTenant(id, extra = []) {
  const t = await okJson(['tenants', 'create', id, ...extra]);
  assert.equal(t.id, id);
  const k = await okJson(['keys', 'create', id, '--label', 'e2e']);
  assert.match(k.api_key, /^kvg-/);
  return { id, keyId: k.key_id, apiKey: k.api_key, client: clientFor(k.api_key) };
}

const tree = {
  tenants: ['list', 'show', 'create', 'update', 'disable', 'enable'],
  keys: ['list', 'create', 'revoke', 'rotate'],
  quotas: ['show', 'set'],
  prices: ['show', 'set'],
  policy: ['show', 'set'],
  cache: ['stats', 'tiers', 'purge', 'evict', 'flush', 'pin'],
  usage: ['report', 'export'],
};

test('--help works on kvgatectl and every subcommand; a group alone is a usage error', async () => {
  const top = await ctl(['--help'], { env: {} });
  assert.equal(top.code, 0);
  for (const group of Object.keys(tree)) assert.match(top.stdout, new RegExp(`\\b${group}\\b`));
  for (const [group, subs] of Object.entries(tree)) {
    const g = await ctl([group, '--help'], { env: {} });
    assert.equal(g.code, 0, `${group} --help`);
    for (const s of subs) {
      assert.match(g.stdout, new RegExp(`\\b${s}\\b`), `${group} --help lists ${s}`);
      const h = await ctl([group, s, '--help'], { env: {} });
      assert.equal(h.code, 0, `${group} ${s} --help: ${h.stderr}`);
      assert.match(h.stdout, /Usage:/);
    }
    await fails([group], 2, /subcommand/i);
  }
  await fails(['tenants', 'frobnicate'], 2);
  await fails([], 2);
});

test('tenants: create, list, show, update; a created tenant and key can call /v1/completions', async () => {
  const t = await newTenant('acme', ['--name', 'Acme Inc', '--requests-per-minute', '600']);
  const r = await complete(t.client);
  assert.ok(r.usage.completion_tokens > 0);

  const list = await okJson(['tenants', 'list']);
  assert.ok(list.data.some((x) => x.id === 'acme' && x.name === 'Acme Inc'));
  const table = await ok(['tenants', 'list']);
  assert.match(table, /^ID\s+NAME\s+ORG\s+STATUS/m);
  assert.match(table, /^acme\s+Acme Inc\s.*active\s+demo\s+600\b/m);

  const shown = await okJson(['tenants', 'show', 'acme']);
  assert.equal(shown.id, 'acme');
  assert.equal(shown.quotas.requests_per_minute, 600);
  assert.match(await ok(['tenants', 'show', 'acme']), /^status:\s+active$/m);

  assert.equal((await okJson(['tenants', 'update', 'acme', '--name', 'Acme Ltd'])).name, 'Acme Ltd');
  const direct = (await admin('GET', '/admin/tenants')).json.data.find((x) => x.id === 'acme');
  assert.equal(direct.name, 'Acme Ltd', 'the server has the new name');
  await fails(['tenants', 'update', 'acme'], 2, /--name or --plan/);
  await fails(['tenants', 'create', 'acme'], 1, /acme/);  // 409: it exists
});

test('tenants disable: its key is refused; enable: it works again', async () => {
  const t = await newTenant('sleepy');
  await complete(t.client);
  // Its help says what the client will see.
  assert.match((await ctl(['tenants', 'disable', '--help'], { env: {} })).stdout, /refused with 401/);
  assert.match(await ok(['tenants', 'disable', 'sleepy']), /sleepy: suspended/);
  assert.equal((await admin('GET', '/admin/tenants/sleepy')).json.status, 'suspended');
  // 401, as for any key that does not open the API: tenancy does not say why.
  await assert.rejects(complete(t.client), (e) => e instanceof OpenAI.AuthenticationError && e.status === 401);
  assert.equal((await okJson(['tenants', 'enable', 'sleepy'])).status, 'active');
  assert.ok((await complete(t.client)).usage.completion_tokens > 0);
});

test('keys: list, revoke (401 from then on), rotate (old refused, new works)', async () => {
  const t = await newTenant('keyed');
  const spare = await okJson(['keys', 'create', 'keyed']);
  const listed = await okJson(['keys', 'list', 'keyed']);
  assert.deepEqual(listed.data.map((k) => k.key_id).sort(), [t.keyId, spare.key_id].sort());
  assert.ok(listed.data.every((k) => !('api_key' in k)), 'keys list shows no secret');
  assert.match(await ok(['keys', 'list', 'keyed']), new RegExp(`^${t.keyId}\\s+e2e\\s`, 'm'));

  await complete(t.client);
  assert.match(await ok(['keys', 'revoke', 'keyed', t.keyId]), /revoked/);
  await assert.rejects(complete(t.client), (e) => e instanceof OpenAI.AuthenticationError && e.status === 401);

  const old = clientFor(spare.api_key);
  await complete(old);
  const rotated = await okJson(['keys', 'rotate', 'keyed', spare.key_id]);
  assert.match(rotated.api_key, /^kvg-/);
  assert.notEqual(rotated.api_key, spare.api_key);
  await assert.rejects(complete(old), (e) => e instanceof OpenAI.AuthenticationError);
  assert.ok((await complete(clientFor(rotated.api_key))).usage.completion_tokens > 0);
  const after = (await admin('GET', '/admin/tenants/keyed/keys')).json.data;
  assert.equal(after.find((k) => k.key_id === spare.key_id).replaced_by, rotated.key_id);
  // The table form shows the new key with its reminder on stderr.
  const third = await ctl(['keys', 'rotate', 'keyed', rotated.key_id]);
  assert.equal(third.code, 0, third.stderr);
  assert.match(third.stdout, /^api_key:\s+kvg-/m);
  assert.match(third.stderr, /shown this once/);
  await fails(['keys', 'revoke', 'keyed', 'no-such-key'], 1, /no-such-key/);
});

test('quotas: show, set requests_per_minute 1 is enforced with a 429; bad values are refused', async () => {
  const t = await newTenant('tight');
  const before = await okJson(['quotas', 'show', 'tight']);
  assert.equal(before.quotas.requests_per_minute, 0);
  assert.match(await ok(['quotas', 'show', 'tight']), /^requests_per_minute\s+unlimited$/m);

  const set = await okJson(['quotas', 'set', 'tight', '--requests-per-minute', '1', '--max-concurrent-requests', '4']);
  assert.equal(set.quotas.requests_per_minute, 1);
  assert.equal(set.quotas.max_concurrent_requests, 4);
  assert.equal(set.quotas.tokens_per_minute, 0, 'quotas not given stay');
  assert.match(await ok(['quotas', 'show', 'tight']), /^requests_per_minute\s+1$/m);

  await complete(t.client);
  await assert.rejects(complete(t.client), (e) => e instanceof OpenAI.RateLimitError && e.status === 429);

  await fails(['quotas', 'set', 'tight', '--requests-per-minute', '-1'], 1, /requests_per_minute.*must not be negative/);
  await fails(['quotas', 'set', 'tight', '--cached-token-weight-permille', '2000'], 1, /cached_token_weight_permille/);
  await fails(['quotas', 'set', 'tight', '--requests-per-minute', 'lots'], 2, /requests-per-minute/);
  await fails(['quotas', 'set', 'tight'], 2, /at least one quota/);
  assert.equal((await okJson(['quotas', 'show', 'tight'])).quotas.requests_per_minute, 1, 'a refused set changed nothing');
});

// What the plan charges for one request's usage, as the server computes it:
// micro-dollars, rounded half up once on the total.
function expectedCost(u, p) {
  const cachedTok = u.prompt_tokens_details?.cached_tokens ?? 0;
  const n = BigInt(u.kvgate.fresh_prefill_tokens) * BigInt(p.fresh) + BigInt(cachedTok) * BigInt(p.cached) +
    BigInt(u.kvgate.cache_written_tokens) * BigInt(p.write) + BigInt(u.completion_tokens) * BigInt(p.output);
  return Number((n + 500000n) / 1000000n);
}

test('prices: show, set; the next request costs what the new prices say', async () => {
  const set = await okJson(['prices', 'set', 'e2e', '--fresh-input-per-mtok', '1000000',
    '--output-per-mtok', '2000000', '--cached-input-per-mtok', '300000', '--cache-write-per-mtok', '50000']);
  assert.deepEqual([set.fresh_input_per_mtok, set.output_per_mtok, set.cached_input_per_mtok, set.cache_write_per_mtok],
    [1000000, 2000000, 300000, 50000]);
  const t = await newTenant('payer', ['--plan', 'e2e']);
  const r1 = await complete(t.client, story, 8);
  assert.equal(r1.usage.kvgate.cost_micros, expectedCost(r1.usage, { fresh: 1000000, cached: 300000, write: 50000, output: 2000000 }));

  await ok(['prices', 'set', 'e2e', '--fresh-input-per-mtok', '7000000', '--output-per-mtok', '11000000']);
  const r2 = await complete(t.client, story, 8);
  // cached_input defaults to 10% of fresh, cache_write to 0.
  assert.equal(r2.usage.kvgate.cost_micros, expectedCost(r2.usage, { fresh: 7000000, cached: 700000, write: 0, output: 11000000 }));
  assert.ok(r2.usage.kvgate.cost_micros > r1.usage.kvgate.cost_micros);

  const plans = await okJson(['prices', 'show']);
  assert.ok(plans.data.some((p) => p.id === 'demo'));
  assert.equal((await okJson(['prices', 'show', 'e2e'])).output_per_mtok, 11000000);
  assert.match(await ok(['prices', 'show', 'e2e']), /^e2e\s+\$7\.00\s+\$0\.70\s+\$0\.00\s+\$8\.75\s+\$14\.00\s+\$11\.00$/m);
  await fails(['prices', 'show', 'no-such-plan'], 1, /no-such-plan/);
  await fails(['prices', 'set', 'e2e', '--output-per-mtok', '5'], 2, /fresh-input-per-mtok/);
  await fails(['prices', 'set', 'e2e', '--fresh-input-per-mtok', '-5', '--output-per-mtok', '5'], 1, /negative/);
  await fails(['tenants', 'create', 'planless', '--plan', 'no-such-plan'], 1, /no-such-plan/);
});

async function metricsText() {
  const r = await server.request('GET', '/metrics', { headers: { authorization: `Bearer ${server.adminToken}` } });
  assert.equal(r.status, 200);
  return r.body;
}

test('policy: show, set; the server and /metrics report the new policy', async () => {
  const shown = await okJson(['policy', 'show']);
  const device = shown.tiers.find((t) => t.tier === 'device');
  assert.ok(device, 'the device tier has a policy');
  assert.ok(shown.available.length > 0);
  assert.match(await ok(['policy', 'show']), /^device\s+\S+/m);

  // Another policy than the current one when the server has one, else the
  // same one with its parameters given explicitly.
  const target = shown.available.find((p) => p.name !== device.policy) ?? shown.available[0];
  const params = Object.entries(target.params ?? {}).flatMap(([k, v]) => ['--param', `${k}=${v}`]);
  const set = await okJson(['policy', 'set', 'device', target.name, ...params]);
  assert.equal(set.policy, target.name);
  // Lost at restart: the answer says so, and where to keep it.
  assert.equal(set.until_restart, true);
  assert.match(await ok(['policy', 'set', 'device', target.name, ...params]), /until the server restarts; to keep it, set \[model\] eviction_policy/);
  const direct = (await admin('GET', '/admin/policy')).json.tiers.find((t) => t.tier === 'device');
  assert.equal(direct.policy, target.name, 'GET /admin/policy reports it');
  for (const [k, v] of Object.entries(target.params ?? {})) assert.equal(direct.params[k], v);
  const metrics = await metricsText();
  assert.match(metrics, new RegExp(`^kvgate_eviction_policy_info\\{tier="device",policy="${target.name}"\\} 1$`, 'm'));

  await fails(['policy', 'set', 'device', 'no-such-policy'], 1, /no-such-policy/);
  await fails(['policy', 'set', 'device', target.name, '--param', 'no_such_param=1'], 1, /no_such_param/);
  await fails(['policy', 'set', 'no-such-tier', target.name], 1, /no-such-tier/);
  await fails(['policy', 'set', 'device', target.name, '--param', 'x=big'], 2, /not a number/);
  // Back to what it was, so the cache tests below see the server's default.
  const back = Object.entries(device.params ?? {}).flatMap(([k, v]) => ['--param', `${k}=${v}`]);
  assert.equal((await okJson(['policy', 'set', 'device', device.policy, ...back])).policy, device.policy);
});

test('cache: stats, evict keeps pins, flush drops them; a flushed tenant\'s next request misses', async () => {
  const t = await newTenant('cachy');
  const first = await complete(t.client, story);
  assert.equal(cached(first), 0);
  const second = await complete(t.client, story);
  assert.ok(cached(second) > 0, 'the repeat hits the cache');

  const stats = await okJson(['cache', 'stats', '--tenant', 'cachy']);
  assert.equal(stats.tenants.length, 1);
  assert.ok(stats.tenants[0].hit_tokens > 0);
  assert.ok(stats.blocks_total > 0);
  assert.match(await ok(['cache', 'stats']), /^cachy\s+\d+\.\d%/m);
  assert.match(await ok(['cache', 'stats', '--tier', 'device']), /^device\b/m);
  await fails(['cache', 'stats', '--tier', 'no-such-tier'], 1, /no-such-tier/);

  // Pin another prefix: it shows in the stats, and a request on it hits.
  const pinned = 'One day, a boy named Tom went to the park with his mom. He saw a big red ball under a tree, ' +
    'and he ran to get it, but a dog got there first and ran away with it.';
  const pin = await okJson(['cache', 'pin', 'cachy', '--prompt', pinned, '--ttl', '300']);
  assert.ok(pin.pinned_tokens > 0, JSON.stringify(pin));
  assert.equal(pin.ttl_s, 300);
  const withPin = (await okJson(['cache', 'stats', '--tenant', 'cachy'])).tenants[0];
  assert.ok(withPin.blocks_pinned > 0, JSON.stringify(withPin));
  assert.ok((await okJson(['cache', 'stats'])).blocks_pinned >= withPin.blocks_pinned);

  // evict: the unpinned story is dropped, the pinned prefix stays.
  const evicted = await okJson(['cache', 'evict', 'cachy']);
  assert.ok(evicted.evicted_blocks > 0, JSON.stringify(evicted));
  assert.equal(evicted.unpinned_blocks, 0);
  assert.equal(cached(await complete(t.client, story)), 0, 'after evict the story misses');
  assert.ok(cached(await complete(t.client, pinned)) > 0, 'after evict the pinned prefix still hits');

  // flush: everything of the tenant's that no request uses, pins too.
  const flushed = await okJson(['cache', 'flush', 'cachy']);
  assert.ok(flushed.evicted_blocks > 0 && flushed.unpinned_blocks > 0, JSON.stringify(flushed));
  assert.equal((await okJson(['cache', 'stats', '--tenant', 'cachy'])).tenants[0].blocks_pinned, 0);
  assert.equal(cached(await complete(t.client, story)), 0, 'the flushed tenant\'s next request misses');
  assert.equal(cached(await complete(t.client, pinned)), 0, 'and so does its formerly pinned prefix');

  const ids = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20].join(',');
  assert.ok((await okJson(['cache', 'pin', 'cachy', '--tokens', ids])).pinned_tokens > 0);
  writeFileSync(path.join(scratch, 'prefix.txt'), pinned);
  assert.ok((await okJson(['cache', 'pin', 'cachy', '--prompt-file', path.join(scratch, 'prefix.txt'), '--ttl', '3600'])).pinned_tokens > 0);
  await fails(['cache', 'pin', 'cachy', '--prompt', pinned, '--ttl', '0'], 1, /ttl_s/);
  await fails(['cache', 'pin', 'cachy'], 2, /--prompt/);
  await fails(['cache', 'flush', 'no-such-tenant'], 1, /no-such-tenant/);
});

test('cache tiers lists the tiers below the device; cache purge keeps this model\'s blocks, --all deletes them', async () => {
  const t = await newTenant('tiered');
  await complete(t.client, story);
  const tiers = await okJson(['cache', 'tiers']);
  const names = tiers.tiers.map((r) => r.tier);
  assert.deepEqual(names, ['host', 'disk'], JSON.stringify(tiers));
  const disk = () => okJson(['cache', 'tiers']).then((v) => v.tiers.find((r) => r.tier === 'disk'));
  // Written through at commit: the request's blocks reach the disk (the writer flushes shortly).
  let before = await disk();
  for (let i = 0; i < 50 && before.blocks === 0; ++i) {
    await new Promise((r) => setTimeout(r, 100));
    before = await disk();
  }
  assert.ok(before.blocks > 0, JSON.stringify(before));
  assert.match(await ok(['cache', 'tiers']), /^host\s+\d+/m);
  // stats --tier names any tier `cache tiers` lists (it read only the device's).
  assert.match(await ok(['cache', 'stats', '--tier', 'host']), /^host\s+\d+/m);
  assert.equal((await okJson(['cache', 'stats', '--tier', 'disk'])).tiers[0].tier, 'disk');
  await fails(['cache', 'stats', '--tier', 'tape'], 1, /it has: device, host, disk/);

  const foreign = await okJson(['cache', 'purge']);
  assert.deepEqual(foreign, { purged_blocks: 0, all: false }, 'this model\'s blocks are not foreign');
  assert.ok((await disk()).blocks >= before.blocks);
  const all = await okJson(['cache', 'purge', '--all']);
  assert.equal(all.all, true);
  assert.ok(all.purged_blocks >= before.blocks, JSON.stringify(all));
  assert.equal((await disk()).blocks, 0);
  await fails(['cache', 'purge', 'extra'], 2);
});

test('usage: report totals equal the sum of the usages the clients got; CSV has a header and a row per request', async () => {
  const t = await newTenant('ledgered');
  const usages = [];
  for (const [prompt, n] of [[story, 5], [story, 3], ['The cat sat on the mat.', 6]])
    usages.push((await complete(t.client, prompt, n)).usage);
  const sum = (f) => usages.reduce((s, u) => s + f(u), 0);

  const report = await okJson(['usage', 'report', 'ledgered']);
  const tot = report.totals ?? report;
  assert.deepEqual(
    [tot.requests, tot.prompt_tokens, tot.cached_tokens, tot.fresh_prefill_tokens, tot.cache_written_tokens,
      tot.completion_tokens, tot.cost_micros],
    [usages.length, sum((u) => u.prompt_tokens), sum((u) => u.prompt_tokens_details?.cached_tokens ?? 0), sum((u) => u.kvgate.fresh_prefill_tokens),
      sum((u) => u.kvgate.cache_written_tokens), sum((u) => u.completion_tokens), sum((u) => u.kvgate.cost_micros)]);
  assert.ok(Array.isArray(report.by_day) && report.by_day.length >= 1);
  const windowed = await okJson(['usage', 'report', 'ledgered', '--last', '1h']);
  assert.equal((windowed.totals ?? windowed).requests, usages.length);
  const future = await okJson(['usage', 'report', 'ledgered', '--from', '2100-01-01', '--to', '2100-02-01']);
  assert.equal((future.totals ?? future).requests, 0);
  const text = await ok(['usage', 'report', 'ledgered']);
  assert.match(text, new RegExp(`^requests:\\s+${usages.length}$`, 'm'));
  assert.match(text, /^DATE\s+REQUESTS/m);

  const csv = (await ok(['usage', 'export', 'ledgered'])).trimEnd().split('\n');
  assert.match(csv[0], /^request_id,tenant_id,/);
  assert.equal(csv.length, 1 + usages.length, 'a header and one row per request');
  assert.ok(csv.slice(1).every((row) => row.split(',')[1] === 'ledgered'));
  const file = path.join(scratch, 'usage.csv');
  await ok(['usage', 'export', 'ledgered', '--output', file]);
  assert.equal(readFileSync(file, 'utf8').trimEnd(), csv.join('\n'));

  await fails(['usage', 'report', 'ledgered', '--from', 'yesterday'], 2, /not a time/);
  await fails(['usage', 'report', 'ledgered', '--last', '3 weeks'], 2, /not a duration/);
  await fails(['usage', 'report', 'no-such-tenant'], 1, /no-such-tenant/);
});

test('exit statuses: bad token 4, no token 2, server down 3, TLS failure 3, unknown tenant 1', async () => {
  const env = { KVGATE_SERVER: server.baseUrl, KVGATE_CACERT: server.certFile };
  // A well-formed token that is not the server's, and a tenant's key: 403.
  await fails(['tenants', 'list'], 4, /admin token/, { env: { ...env, KVGATE_ADMIN_TOKEN: 'kvga-' + '0'.repeat(64) } });
  await fails(['tenants', 'list'], 4, /HTTP 403/, { env: { ...env, KVGATE_ADMIN_TOKEN: server.apiKey } });
  await fails(['tenants', 'list'], 2, /no admin token/, { env });
  // The server's own admin-token file holds a digest, not the token.
  await fails(['tenants', 'list', '--token-file', path.join(server.dataDir, 'admin-token')], 2, /digest/, { env });

  // The flags instead of the environment.
  const tokenFile = path.join(scratch, 'token');
  writeFileSync(tokenFile, server.adminToken + '\n', { mode: 0o600 });
  const flags = ['--server', server.baseUrl, '--token-file', tokenFile, '--cacert', server.certFile];
  const viaFlags = await ctl(['tenants', 'list', '--json', ...flags], { env: {} });
  assert.equal(viaFlags.code, 0, viaFlags.stderr);
  assert.ok(JSON.parse(viaFlags.stdout).data.some((x) => x.id === 'demo'));

  // Nothing listening: a port that was just free.
  const port = await new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => { const p = s.address().port; s.close(() => resolve(p)); });
  });
  const down = ['--server', `https://127.0.0.1:${port}`, '--token-file', tokenFile, '--cacert', server.certFile];
  await fails(['tenants', 'list', ...down], 3, new RegExp(`cannot connect to 127\\.0\\.0\\.1:${port}`), { env: {} });

  // Not verified against the system's trust store; --insecure skips the check.
  const untrusted = ['--server', server.baseUrl, '--token-file', tokenFile];
  await fails(['tenants', 'list', ...untrusted], 3, /certificate/, { env: {} });
  const insecure = await ctl(['tenants', 'list', ...untrusted, '--insecure'], { env: {} });
  assert.equal(insecure.code, 0, insecure.stderr);
  // By name: the certificate names localhost too (SNI and the name check).
  const byName = ['--server', server.baseUrl.replace('127.0.0.1', 'localhost'), ...flags.slice(2)];
  const named = await ctl(['tenants', 'list', ...byName], { env: {} });
  assert.equal(named.code, 0, named.stderr);

  await fails(['tenants', 'show', 'no-such-tenant'], 1, /no-such-tenant.*\(HTTP 404\)/);
  await fails(['quotas', 'show', 'no-such-tenant'], 1, /no-such-tenant/);
  await fails(['keys', 'create', 'no-such-tenant'], 1, /no-such-tenant/);
  await fails(['tenants', 'list', '--server', 'http://127.0.0.1:1'], 2, /https:\/\//);
  await fails(['tenants', 'list', '--timeout', '0'], 2);
});
