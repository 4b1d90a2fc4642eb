// The KV tiers through the real server, as an operator and a client see
// them: a device pool far too small for the traffic, so repeats are served
// from host memory and RocksDB; a `kill -9`, after which the restarted
// server finds its disk tier warm and the blocks it had acknowledged as
// persisted hit again; then another model on the same data directory,
// which ignores the old entries until they are purged (admin route and
// `kvgate cache purge`).
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import OpenAI from 'openai';
import { parseExposition, sum } from './prom_text.mjs';
import { startServer } from './server.mjs';

const binary = process.env.KVGATE_BINARY;
const model = 'stories260K';
const B = 16;
const N = 40;            // distinct prompts
const promptTokens = 100; // six full blocks and a partial one: never a whole-prompt hit
// stories260K holds 1,280 bytes of K/V per token: 20 blocks on the device
// and a dozen in host memory, far fewer than the 240 blocks of the prompts.
const tierArgs = ['--kv-budget', '400KiB', '--kv-host-bytes', '256KiB', '--kv-disk-bytes', '64MiB'];

const dataDir = mkdtempSync(path.join(tmpdir(), 'kvgate-e2e-tiers-'));
const running = new Set();  // servers a failed test left behind: killed, so the next can open the tier
after(async () => {
  for (const s of running) await s.kill9();
  rmSync(dataDir, { recursive: true, force: true });
});

async function start({ extraArgs = [], ...extra } = {}) {
  for (const s of running) await s.kill9();  // left by a failed test: it holds the tier's lock
  running.clear();
  const s = await startServer([...tierArgs, ...extraArgs], { dataDir, ...extra });
  running.add(s);
  return s;
}
async function stop(s) {
  running.delete(s);
  return s.stop();
}

function prompt(i) {
  const ids = [];
  let x = 2463534242 ^ Math.imul(i + 1, 2654435761);
  for (let k = 0; k < promptTokens; k++) {
    x ^= x << 13; x ^= x >>> 17; x ^= x << 5;
    ids.push(3 + ((x >>> 0) % 500));
  }
  return ids;
}

function clientFor(server, apiKey) {
  return new OpenAI({ apiKey, baseURL: server.baseUrl + '/v1', httpAgent: server.agent, maxRetries: 0 });
}

async function admin(server, token, method, route, body) {
  const r = await server.request(method, route, {
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body,
  });
  return { status: r.status, json: r.body ? JSON.parse(r.body) : null };
}

async function metric(server, token, name) {
  const r = await server.request('GET', '/metrics', { headers: { authorization: `Bearer ${token}` } });
  assert.equal(r.status, 200);
  return sum(parseExposition(r.body), name);
}

async function complete(client, i) {
  return client.completions.create({ model, prompt: prompt(i), max_tokens: 4, temperature: 0 });
}

const byTier = (r) => r.usage.kvgate.cached_tokens_by_tier;

let apiKey;
let adminToken;
let persistedAtKill = 0;
const outputs = [];

test('a device pool too small for the traffic serves repeats from host and disk, unchanged', async () => {
  const server = await start();
  apiKey = server.apiKey;
  adminToken = server.adminToken;
  assert.ok(server.lines.some((l) => /backend cpu, KV cache 320 tokens \(20 blocks/.test(l)), server.lines.join('\n'));
  assert.ok(server.lines.some((l) => /KV host tier: 12 blocks/.test(l)), server.lines.join('\n'));
  assert.ok(server.lines.some((l) => /KV disk tier: .* 0 blocks found/.test(l)), server.lines.join('\n'));
  const client = clientFor(server, apiKey);
  for (let i = 0; i < N; i++) {
    const r = await complete(client, i);
    assert.equal(r.usage.prompt_tokens, promptTokens);
    assert.equal(r.usage.prompt_tokens_details.cached_tokens, 0);
    outputs.push(r.choices[0].text);
  }
  // The first prompts left the device and the host long ago: they come back from RocksDB.
  const again = await complete(client, 0);
  assert.equal(again.choices[0].text, outputs[0]);
  assert.equal(again.usage.prompt_tokens_details.cached_tokens, 96);
  assert.equal(byTier(again).disk, 96, JSON.stringify(again.usage));
  assert.equal(again.usage.prompt_tokens, byTier(again).device + byTier(again).host + byTier(again).disk +
    again.usage.kvgate.fresh_prefill_tokens);

  const tiers = await admin(server, adminToken, 'GET', '/admin/cache/tiers');
  assert.equal(tiers.status, 200);
  assert.deepEqual(tiers.json.tiers.map((t) => t.tier), ['host', 'disk']);
  assert.ok(await metric(server, adminToken, 'kvgate_kv_restores_blocks_total') >= 6);

  // Wait until every block is acknowledged as written, then kill the server without warning.
  let persisted = -1;
  for (let tries = 0; tries < 100; tries++) {
    persisted = await metric(server, adminToken, 'kvgate_kv_persisted_blocks_total');
    if (persisted >= N * 6) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.ok(persisted >= N * 6, `persisted ${persisted} blocks`);
  persistedAtKill = persisted;
  running.delete(server);
  assert.equal(await server.kill9(), 'SIGKILL');
});

test('after kill -9 the restarted server finds its disk tier warm', async () => {
  const server = await start();
  // "1 block", "2 blocks": the count and the noun agree.
  const found = server.lines.map((l) => l.match(/KV disk tier: .* (\d+) (blocks?) found/)).find(Boolean);
  assert.ok(found, server.lines.join('\n'));
  assert.equal(found[2], found[1] === '1' ? 'block' : 'blocks');
  // A second start has no key to show: the curl line (printed after the
  // listening line the start waits for) says which to set.
  const hint = (l) => /try, with KVGATE_API_KEY set to an API key .*: curl /.test(l);
  for (let i = 0; i < 100 && !server.lines.some(hint); ++i) await new Promise((r) => setTimeout(r, 50));
  assert.ok(server.lines.some(hint), server.lines.join('\n'));
  const client = clientFor(server, apiKey);
  let hitBlocks = 0;
  for (let i = 0; i < N; i++) {
    const r = await complete(client, i);
    assert.equal(r.choices[0].text, outputs[i], `prompt ${i}: the same output as before the restart`);
    if (i === 0) assert.equal(byTier(r).disk, 96, 'the first request after the restart hits from disk');
    hitBlocks += byTier(r).disk / B;
  }
  assert.ok(hitBlocks >= 0.99 * persistedAtKill, `${hitBlocks} of ${persistedAtKill} persisted blocks hit`);
  assert.equal(await stop(server), 0);
});

test('another model ignores the old entries; purge removes them', async () => {
  const other = path.join(dataDir, 'other.gguf');
  const stories = path.join(process.env.KVGATE_SHARED, 'models/stories260K.gguf');
  execFileSync(binary, ['mkmodel', '--out', other, '--vocab-from', stories, '--layers', '2', '--dim', '64',
    '--heads', '4', '--kv-heads', '2', '--ffn', '128', '--context', '512', '--seed', '7'], { stdio: 'ignore' });
  const server = await start({ model: other });
  const found = server.lines.find((l) => /KV disk tier/.test(l));
  assert.match(found, / 0 blocks found, (\d+) of another model or KV layout ignored/);
  const foreign = Number(found.match(/(\d+) of another model/)[1]);
  assert.ok(foreign >= N * 6);
  const purge = await admin(server, adminToken, 'POST', '/admin/cache/purge', {});
  assert.equal(purge.status, 200);
  assert.equal(purge.json.purged_blocks, foreign);
  assert.equal(await stop(server), 0);

  // Offline, with the server stopped: nothing of another model is left to purge.
  const out = execFileSync(binary, ['cache', 'purge', '--data-dir', dataDir, '--model', other]).toString();
  assert.match(out, /purged 0 blocks/);
});

test('a disk tier that will not open stops the start naming its directory, or is moved aside', async () => {
  const kv = path.join(dataDir, 'kv');
  writeFileSync(path.join(kv, 'CURRENT'), 'not a manifest name\n');
  const r = spawnSync(binary, ['serve', '--data-dir', dataDir, '--listen', '127.0.0.1:0', ...tierArgs,
    '--model', path.join(process.env.KVGATE_SHARED, 'models/stories260K.gguf')], { encoding: 'utf8', timeout: 60000 });
  assert.equal(r.status, 1, r.stdout + r.stderr);
  assert.ok(r.stderr.includes(`kv disk tier at ${kv}`), r.stderr);
  assert.match(r.stderr, /move_aside_corrupt/);

  const server = await start({ extraArgs: ['--kv-move-aside-corrupt'] });
  const line = server.lines.find((l) => /KV disk tier/.test(l));
  assert.match(line, / 0 blocks found; the database there would not open and was moved to /);
  assert.ok(readdirSync(dataDir).some((f) => f.startsWith('kv.corrupt-')));
  const r2 = await complete(clientFor(server, apiKey), 0);
  assert.equal(r2.choices[0].text, outputs[0], 'it serves, from an empty disk tier');
  assert.equal(await stop(server), 0);
});
