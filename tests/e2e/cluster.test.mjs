// `kvgate route` over three `kvgate serve` replicas sharing one Redis, all
// on loopback, driven by the official openai client through the front: a
// repeated prefix runs where it is resident (cache_aware) and hits the
// device, where round_robin spreads it and misses; a replica killed with
// SIGKILL leaves its prefix in Redis for another to restore, and is taken
// out of rotation; streams it was serving end with an error frame while the
// others complete; a replica of another block size serves but is never
// scored; tenants never share cached blocks, through any tier; a replica
// refuses tenants that bypass the front.
//
// Order matters: the tests that kill replicas (Redis, kill -9) come last.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import OpenAI from 'openai';
import { Cluster, admin, clientFor, newTenant, redisCommand, scrape, sleep, value, waitFor, within } from './cluster.mjs';
import { sum } from './prom_text.mjs';

const model = 'stories260K';
const B = 16;  // tokens per block, the replicas' and the fronts' default

const cluster = new Cluster();
let replicas;  // the three replicas the fronts route over
let aware;     // front, --router cache_aware
let rr;        // front, --router round_robin
let demoAware; // the demo tenant's client on each front
let demoRr;

before(async () => {
  await cluster.startRedis();
  replicas = await Promise.all([0, 1, 2].map(() => cluster.startReplica()));
  [aware, rr] = await Promise.all([
    cluster.startFront(replicas, { router: 'cache_aware' }),
    cluster.startFront(replicas, { router: 'round_robin' }),
  ]);
  demoAware = clientFor(aware);
  demoRr = clientFor(rr);
  for (const f of [aware, rr]) {
    assert.ok(f.apiKey && f.adminToken, `the front prints its first-start secrets:\n${f.lines.join('\n')}`);
    await waitUp(f, replicas.map((r) => r.url));
  }
});

after(async () => {
  // SIGTERM first (a front's ledger is written on its way out), then
  // SIGKILL whatever is left, and every directory removed; also when a test failed.
  const codes = [];
  try {
    for (const f of [aware, rr]) {
      if (!f) continue;
      codes.push(await within(f.stop(), 15000, () => 'hung'));
    }
  } finally {
    await cluster.cleanup();
  }
  assert.deepEqual(codes, codes.map(() => 0), 'SIGTERM ends each front cleanly');
});

// Varied story text, different from its first words on for each seed: 300+ tokens.
const words = ('the a little big old small happy sad red blue green dog cat bird girl boy mom dad tree park ball ' +
  'house sun moon star river hill flower cake toy box car boat fish frog bear lion king queen friend day night ' +
  'ran saw found liked wanted played jumped looked said made took gave went came sang ate slept laughed cried ' +
  'and but then so because when after under over near with into from very quickly slowly softly').split(' ');
function longPrompt(seed, sentences = 24) {
  let x = (2463534242 ^ Math.imul(seed + 1, 2654435761)) >>> 0;
  const next = () => {
    x ^= x << 13; x ^= x >>> 17; x ^= x << 5;
    return (x >>> 0) % words.length;
  };
  const out = [`Story ${seed}.`];
  for (let s = 0; s < sentences; s++) {
    const n = 6 + (next() % 6);
    const w = [];
    for (let i = 0; i < n; i++) w.push(words[next()]);
    w[0] = w[0][0].toUpperCase() + w[0].slice(1);
    out.push(w.join(' ') + '.');
  }
  return out.join(' ');
}

const cached = (r) => r.usage.prompt_tokens_details?.cached_tokens ?? 0;
function tiers(r) {
  const t = r.usage.kvgate?.cached_tokens_by_tier;
  assert.ok(t, `usage carries kvgate's cached_tokens_by_tier: ${JSON.stringify(r.usage)}`);
  return { device: t.device ?? 0, host: t.host ?? 0, disk: t.disk ?? 0 };
}
// The cache_aware front learns what a replica holds from its block events
// (sent in batches every 10 ms): a short pause before a repeat.
const settle = () => sleep(250);

// A completion through `client`; what it says and where it ran.
async function complete(client, prompt, extra = {}) {
  const { data, response } = await client.completions
    .create({ model, prompt, max_tokens: 2, temperature: 0, ...extra })
    .withResponse();
  const replica = response.headers.get('x-kvgate-replica');
  assert.ok(replica, 'the front names the replica in x-kvgate-replica');
  return { usage: data.usage, replica, text: data.choices[0].text, finish: data.choices[0].finish_reason };
}

function knownReplica(url) {
  assert.ok(cluster.processes.some((p) => p.url === url), `x-kvgate-replica ${url} is one of ours`);
  return url;
}

async function waitUp(front, urls, up = 1, timeoutMs = 10000) {
  return waitFor(async () => {
    const m = await scrape(front);
    return urls.every((u) => value(m, 'kvgate_route_replica_up', { replica: u }) === up) && m;
  }, { timeoutMs, what: `kvgate_route_replica_up ${up} for ${urls.join(', ')} on ${front.name}` });
}

async function usageOf(front, apiKey) {
  const r = await front.request('GET', '/v1/usage', { headers: { authorization: `Bearer ${apiKey}` } });
  assert.equal(r.status, 200, r.body);
  return JSON.parse(r.body);
}

// K distinct long prompts, each sent `rounds` times (a round is every prompt once, then a pause).
async function repeatedPrefixes(client, seedBase, K = 4, rounds = 3) {
  const placed = Array.from({ length: K }, () => []);
  const total = { device: 0, cached: 0, prompt: 0, promptFirst: 0 };
  for (let round = 0; round < rounds; round++) {
    for (let i = 0; i < K; i++) {
      const r = await complete(client, longPrompt(seedBase + i));
      placed[i].push(knownReplica(r.replica));
      if (round === 0) {
        total.promptFirst += r.usage.prompt_tokens;
        continue;
      }
      total.device += tiers(r).device;
      total.cached += cached(r);
      total.prompt += r.usage.prompt_tokens;
    }
    await settle();
  }
  return { placed, ...total };
}

test('cache_aware: a repeated long prompt runs on the replica holding it and hits its device', async (t) => {
  const prompt = longPrompt(1);
  const first = await complete(demoAware, prompt);
  knownReplica(first.replica);
  assert.ok(first.usage.prompt_tokens >= 300, `a long prompt: ${first.usage.prompt_tokens} tokens`);
  assert.equal(cached(first), 0, 'a new prompt hits nothing');
  await settle();
  const second = await complete(demoAware, prompt);
  t.diagnostic(`on ${first.replica}, then ${second.replica}: ${cached(second)} of ${second.usage.prompt_tokens} cached`);
  assert.equal(second.replica, first.replica, 'the repeat goes where its prefix is');
  assert.equal(second.usage.prompt_tokens, first.usage.prompt_tokens);
  assert.equal(cached(second) % B, 0, 'whole blocks');
  assert.ok(cached(second) >= second.usage.prompt_tokens - B, 'every full block of the prompt hits');
  assert.equal(tiers(second).device, cached(second), 'from the device of the replica it ran on');
  assert.equal(second.text, first.text, 'the same greedy output');

  // Cold prefixes spread over the replicas.
  const places = new Set();
  for (let i = 0; i < 6; i++) places.add(knownReplica((await complete(demoAware, longPrompt(100 + i))).replica));
  t.diagnostic(`6 cold prefixes on ${places.size} replicas`);
  assert.ok(places.size >= 2, `distinct prefixes spread over more than one replica: ${[...places]}`);
  const m = await scrape(aware);
  assert.ok(sum(m, 'kvgate_route_requests_total') >= 8, 'kvgate_route_requests_total counts every placement');
  for (const u of places) assert.ok(value(m, 'kvgate_route_requests_total', { replica: u }) >= 1, u);
});

test('round_robin spreads a repeated prefix and misses where cache_aware hits', async (t) => {
  const K = 4;  // not a multiple of 3: each round starts one replica on, so a prompt's rounds land on all three
  const ca = await repeatedPrefixes(demoAware, 200, K);
  const rrw = await repeatedPrefixes(demoRr, 300, K);
  const distinct = (w) => w.placed.map((p) => new Set(p).size);
  t.diagnostic(`cache_aware: replicas per prompt ${distinct(ca)}, repeats' device-cached ${ca.device}, cached ${ca.cached} of ${ca.prompt}`);
  t.diagnostic(`round_robin: replicas per prompt ${distinct(rrw)}, repeats' device-cached ${rrw.device}, cached ${rrw.cached} of ${rrw.prompt}`);

  assert.ok(distinct(ca).filter((n) => n === 1).length >= K - 1, `cache_aware keeps a prompt on one replica: ${JSON.stringify(ca.placed)}`);
  assert.ok(distinct(rrw).every((n) => n >= 2), `round_robin moves every prompt: ${JSON.stringify(rrw.placed)}`);
  assert.ok(distinct(rrw).filter((n) => n === 3).length >= K / 2, `mostly to three replicas: ${JSON.stringify(rrw.placed)}`);
  // The repeats (rounds 2 and 3) of cache_aware hit their whole prompts (but a partial block) on the device.
  assert.ok(ca.device >= 0.75 * (ca.prompt - 2 * K * B), `cache_aware's repeats hit the device: ${ca.device} of ${ca.prompt}`);
  // round_robin's hit only through Redis (a restore, counted as disk), if at all.
  assert.ok(ca.device > 2 * rrw.device, `cache_aware ${ca.device} device-cached tokens, round_robin ${rrw.device}`);
  assert.ok(ca.cached >= rrw.cached, `cache_aware ${ca.cached} cached tokens in all, round_robin ${rrw.cached}`);
});

test('prompt_cache_key keeps each key on one replica, even under round_robin, and its prefix is cached after its first request', async () => {
  const keys = 6, perKey = 10;
  const placed = Array.from({ length: keys }, () => new Set());
  let laterCached = 0, laterPrompts = 0;
  for (let n = 0; n < perKey; n++) {
    for (let k = 0; k < keys; k++) {
      // The key's shared prefix, then a tail of its own.
      const prompt = longPrompt(700 + k, 12) + ' ' + longPrompt(9000 + k * perKey + n, 2);
      const r = await complete(demoRr, prompt, { prompt_cache_key: `conversation-${k}` });
      placed[k].add(knownReplica(r.replica));
      if (n > 0) laterCached += cached(r), laterPrompts += 1;
    }
    await settle();
  }
  assert.deepEqual(placed.map((p) => p.size), Array(keys).fill(1), `each key on one replica: ${JSON.stringify(placed.map((p) => [...p]))}`);
  assert.ok(new Set(placed.map((p) => [...p][0])).size > 1, 'the keys spread over the replicas');
  // Every later request of a key finds the key's prefix (12 sentences: several blocks) cached.
  assert.ok(laterCached >= laterPrompts * 4 * B, `later requests cached ${laterCached} tokens over ${laterPrompts} requests`);
});

test("tenants never share cached blocks through the front, in any tier", async (t) => {
  const prompt = longPrompt(400);
  await complete(demoAware, prompt);
  await settle();
  const demoAgain = await complete(demoAware, prompt);
  assert.ok(cached(demoAgain) > 0, 'the demo tenant has it cached');
  // Let the demo tenant's blocks reach Redis too.
  await sleep(300);

  const acmeKey = await newTenant(aware, 'acme');
  const other = clientFor(aware, acmeKey);
  const a = await complete(other, prompt);
  t.diagnostic(`acme's first on ${a.replica}: ${JSON.stringify(a.usage)}`);
  assert.equal(cached(a), 0, "another tenant's first request hits nothing");
  assert.deepEqual(tiers(a), { device: 0, host: 0, disk: 0 }, 'not on the device, in host memory, on disk or in Redis');
  await settle();
  const b = await complete(other, prompt);
  assert.ok(cached(b) > 0, 'its own second request hits');
  assert.ok(cached(b) >= b.usage.prompt_tokens - B);
  // The front owns the ledger: each tenant's usage is its own.
  const acme = await waitFor(async () => {
    const u = await usageOf(aware, acmeKey);
    return u.requests >= 2 && u;
  }, { what: "acme's two requests in the front's ledger" });
  assert.equal(acme.requests, 2);
  assert.equal(acme.cached_tokens, cached(b));
});

test("an operator's pin through the front: run for the front's tenant on a replica, and its next request hits it", async (t) => {
  const key = await newTenant(aware, 'pinned-by-admin');
  const prompt = longPrompt(950);
  const pin = await admin(aware, 'POST', '/admin/tenants/pinned-by-admin/cache/pins', { prompt, ttl_s: 120 });
  assert.equal(pin.status, 200, pin.body);
  t.diagnostic(`pin: ${pin.body}`);
  assert.ok(pin.json.pinned_tokens >= B, 'the full blocks of the prompt are pinned');
  assert.ok(pin.json.cost_micros > 0, 'billed as a cache write to the tenant');
  const r = await complete(clientFor(aware, key), prompt);
  assert.ok(cached(r) >= pin.json.pinned_tokens, `its request hits the pinned prefix: ${JSON.stringify(r.usage)}`);
  const unknown = await admin(aware, 'POST', '/admin/tenants/nobody/cache/pins', { prompt });
  assert.equal(unknown.status, 404, "the front's own tenants: an unknown one is not found");
});

test('a front started after its replicas hold blocks resyncs from their snapshots and its view agrees', async (t) => {
  // The replicas hold the earlier tests' blocks, published before this
  // front subscribed: it hears each feed past seq 1, asks each replica for
  // GET /internal/v1/blocks and rebuilds its view, which the next digests confirm.
  const late = await cluster.startFront(replicas, { router: 'cache_aware' });
  try {
    await waitUp(late, replicas.map((r) => r.url));
    const m = await waitFor(async () => {
      const x = await scrape(late);
      return replicas.every((r) => value(x, 'kvgate_route_resyncs_total', { replica: r.url }) >= 1) && x;
    }, { timeoutMs: 10000, what: `kvgate_route_resyncs_total >= 1 for every replica on ${late.name}` });
    t.diagnostic(`resyncs ${replicas.map((r) => value(m, 'kvgate_route_resyncs_total', { replica: r.url })).join(', ')}`);
    await sleep(1500);  // a digest from each (one a second) compared with the rebuilt view
    const after = await scrape(late);
    for (const r of replicas) {
      assert.equal(value(after, 'kvgate_route_view_agrees', { replica: r.url }), 1, `view of ${r.url}`);
      assert.equal(value(after, 'kvgate_route_resync_failures_total', { replica: r.url }), 0, r.url);
    }
  } finally {
    assert.equal(await within(late.stop(), 15000, () => 'hung'), 0);
  }
});

test("a stop string ends the request at its replica, which still reports the prompt's accounting", async (t) => {
  // The stop is matched at the front, which asks the replica to end the
  // request: the replica's done line (cached and fresh prefill) must still
  // reach the bill, so the repeat is billed as cached.
  const prompt = longPrompt(900);
  const free = await complete(demoAware, prompt, { max_tokens: 48 });
  const stop = free.text.trim().split(/\s+/).filter((w) => w.length >= 3)[2];
  assert.ok(stop, `a word to stop at in ${JSON.stringify(free.text)}`);
  await settle();
  const r = await complete(demoAware, prompt, { max_tokens: 48, stop: [stop] });
  t.diagnostic(`stop ${JSON.stringify(stop)}: ${r.usage.completion_tokens} tokens, ${cached(r)} of ${r.usage.prompt_tokens} cached`);
  assert.equal(r.finish, 'stop');
  assert.ok(!r.text.includes(stop), 'the stop string is not in the text');
  assert.ok(r.usage.completion_tokens < 48, 'the request ended at the stop');
  assert.equal(r.replica, free.replica, 'the repeat ran where the prompt is resident');
  assert.ok(cached(r) >= r.usage.prompt_tokens - B, `most of the prompt cached: ${JSON.stringify(r.usage)}`);
  assert.equal(r.usage.prompt_tokens, cached(r) + r.usage.kvgate.fresh_prefill_tokens, 'prompt = cached + fresh');
});

test('the Responses API through a front: stored there, continued there, and refused by a replica', async () => {
  // The front bills, so it keeps the stored responses; replicas only run the engine.
  const first = await demoAware.responses.create({ model, input: longPrompt(4242, 6), max_output_tokens: 4, temperature: 0 });
  const second = await demoAware.responses.create(
    { model, input: 'And then?', max_output_tokens: 4, temperature: 0, previous_response_id: first.id });
  assert.equal(second.previous_response_id, first.id);
  assert.ok(second.usage.input_tokens_details.cached_tokens >= Math.floor(first.usage.input_tokens / B) * B,
    'the continued turn reads the first turn\'s prompt from its replica\'s cache');
  assert.equal((await demoAware.responses.retrieve(second.id)).id, second.id);
  await assert.rejects(clientFor(replicas[0]).responses.create({ model, input: 'Hi', max_output_tokens: 2 }),
                       OpenAI.PermissionDeniedError);
});

test('a replica refuses tenants directly, and its internal route without the token', async () => {
  const r = replicas[0];
  await assert.rejects(
    clientFor(r).completions.create({ model, prompt: 'Once upon a time', max_tokens: 2 }),
    (e) => {
      assert.ok(e instanceof OpenAI.PermissionDeniedError, `403, got ${e.status} ${e.message}`);
      return true;
    });
  await assert.rejects(
    clientFor(r).chat.completions.create({ model, messages: [{ role: 'user', content: 'Hi' }], max_tokens: 2 }),
    OpenAI.PermissionDeniedError);
  const internal = await r.request('POST', '/internal/v1/generate', {
    headers: { 'content-type': 'application/json' },
    body: { prompt: [1, 2, 3], max_tokens: 2 },
  });
  assert.equal(internal.status, 401, internal.body);
  const withKey = await r.request('POST', '/internal/v1/generate', {
    headers: { 'content-type': 'application/json', authorization: `Bearer ${r.apiKey}` },
    body: { prompt: [1, 2, 3], max_tokens: 2 },
  });
  assert.equal(withKey.status, 401, `a tenant's key is not the internal token: ${withKey.body}`);
});

test('a replica of another block size serves but is never scored for its prefixes', async (t) => {
  const odd = await cluster.startReplica({ blockSize: 32 });
  const front = await cluster.startFront([replicas[0], odd], { router: 'cache_aware' });
  try {
    const m = await waitFor(async () => {
      const x = await scrape(front);
      return value(x, 'kvgate_route_replica_scorable', { replica: odd.url }) === 0 &&
        value(x, 'kvgate_route_replica_scorable', { replica: replicas[0].url }) === 1 && x;
    }, { timeoutMs: 5000, what: `kvgate_route_replica_scorable 0 for ${odd.url}, 1 for ${replicas[0].url}` });
    // One reason at 1 per unscorable replica (a reason that no longer holds reads 0).
    const reasons = (url) => m.samples.filter((s) =>
      s.name === 'kvgate_route_replica_unscorable_info' && s.labels.replica === url && s.value === 1);
    const info = reasons(odd.url);
    assert.equal(info.length, 1, JSON.stringify(info));
    t.diagnostic(`reason: ${info[0].labels.reason}`);
    assert.match(info[0].labels.reason, /block_size/);
    assert.match(info[0].labels.reason, /32/);
    assert.deepEqual(reasons(replicas[0].url), [], 'the matching replica has no reason');
    assert.equal(value(m, 'kvgate_route_replica_up', { replica: odd.url }), 1);

    const client = clientFor(front);
    const places = [];
    for (let i = 0; i < 4; i++) {
      const r = await complete(client, longPrompt(500 + i));
      assert.ok(r.usage.completion_tokens > 0);
      places.push(r.replica);
    }
    t.diagnostic(`4 cold prompts on ${places}`);
    assert.ok(places.includes(odd.url), 'the unscorable replica still serves');
    const after = await scrape(front);
    assert.ok(value(after, 'kvgate_route_requests_total', { replica: odd.url }) >= 1);
  } finally {
    await front.kill9();
    await odd.kill9();
  }
});

let deadA;  // the replica the Redis test killed

test('a replica killed with SIGKILL: another restores its prefix from Redis', async (t) => {
  const prompt = longPrompt(600);
  // What earlier tests wrote has landed: the count holds still.
  let keysBefore = -1;
  await waitFor(async () => {
    const n = await cluster.redis.dbsize();
    const still = n === keysBefore;
    keysBefore = n;
    return still;
  }, { timeoutMs: 10000, intervalMs: 300, what: 'the Redis key count to hold still' });
  const first = await complete(demoAware, prompt);
  const A = knownReplica(first.replica);
  const full = Math.floor(first.usage.prompt_tokens / B);
  // The replica writes its blocks down to Redis behind the request: wait for them.
  await waitFor(async () => (await cluster.redis.dbsize()) >= keysBefore + full,
    { timeoutMs: 10000, what: `${full} more keys in Redis than ${keysBefore}` });
  await sleep(300);  // and for the other replicas to hear of them on Redis's channel

  const victim = replicas.find((r) => r.url === A);
  const t0 = Date.now();
  assert.equal(await victim.kill9(), 'SIGKILL');
  deadA = victim;
  await waitUp(aware, [A], 0, 5000);
  t.diagnostic(`${A} up=0 on the front ${Date.now() - t0} ms after the kill`);
  await waitUp(rr, [A], 0, 5000);

  const again = await complete(demoAware, prompt);
  const tier = tiers(again);
  t.diagnostic(`again on ${again.replica}: ${JSON.stringify(again.usage)}`);
  assert.notEqual(again.replica, A, 'a dead replica gets no requests');
  knownReplica(again.replica);
  assert.equal(again.text, first.text, 'the same greedy output');
  assert.ok(tier.disk > 0, 'restored from the shared tier (a Redis restore counts as disk)');
  assert.equal(tier.disk % B, 0);
  assert.equal(tier.device, 0, 'it was never on this replica');
  assert.equal(cached(again), tier.device + tier.host + tier.disk);
  assert.ok(cached(again) >= again.usage.prompt_tokens / 2, `most of the prompt: ${cached(again)} of ${again.usage.prompt_tokens}`);
  for (let i = 0; i < 4; i++) assert.notEqual((await complete(demoAware, longPrompt(700 + i))).replica, A);

  // What a reader of Redis sees (it needed the password): names of keyed
  // tags, values sealed (AES-256-GCM), no block record in the clear.
  const name = (await cluster.redis.command('RANDOMKEY')).toString();
  assert.match(name, /^kvgate:kv:2:[0-9a-f]{16}:[0-9a-f]{32}:[0-9a-f]{32}$/);
  const sealed = await cluster.redis.command('GET', name);
  assert.ok(Buffer.isBuffer(sealed), String(sealed));
  assert.equal(sealed.subarray(0, 4).toString(), 'KVGS', 'sealed');
  assert.equal(sealed.indexOf('KVGB'), -1, 'no record magic in the clear');
  assert.match(await redisCommand(cluster.redis.port, ['GET', name]), /^-NOAUTH/, 'Redis asks for the password');
});

test('kill -9 mid-stream: its streams end with an error, the others complete', async (t) => {
  const live = replicas.filter((r) => r !== deadA && r.running());
  assert.ok(live.length >= 2, 'two live replicas to choose between');
  const N = 6;
  // Streams that last a few seconds on this machine, however fast it is:
  // long enough to outlive the kill, short enough for the others to finish.
  const usageBefore = await usageOf(rr, rr.apiKey);
  const t0 = Date.now();
  const timing = await demoRr.completions.create({ model, prompt: 'Once upon a time, to time it,', max_tokens: 64,
    temperature: 0, ignore_eos: true, stream: true });
  for await (const chunk of timing) void chunk;
  const perSecond = 64 / Math.max(0.001, (Date.now() - t0) / 1000);
  const maxTokens = Math.round(Math.min(1000, Math.max(128, 4 * perSecond)));
  t.diagnostic(`${perSecond.toFixed(0)} tokens/s in one stream: streams of ${maxTokens} tokens`);
  const opened = await Promise.all(Array.from({ length: N }, (_, i) => demoRr.completions.create({
    model, prompt: `Once upon a time, in story ${i},`, max_tokens: maxTokens, temperature: 0, ignore_eos: true,
    stream: true, stream_options: { include_usage: true },
  }).withResponse()));
  const runs = opened.map(({ data, response }) => {
    const run = { replica: response.headers.get('x-kvgate-replica'), chunks: 0, finish: null, usage: null, error: null };
    let gotFirst;
    run.first = new Promise((r) => (gotFirst = r));
    run.done = (async () => {
      try {
        for await (const chunk of data) {
          if (++run.chunks === 1) gotFirst();
          if (chunk.usage) run.usage = chunk.usage;
          for (const c of chunk.choices) if (c.finish_reason) run.finish = c.finish_reason;
        }
      } catch (e) {
        run.error = e;
      } finally {
        gotFirst();
      }
    })();
    return run;
  });
  await Promise.all(runs.map((r) => r.first));
  const counts = new Map(live.map((r) => [r.url, runs.filter((x) => x.replica === r.url).length]));
  const victim = live.find((r) => counts.get(r.url) === Math.max(...counts.values()));
  const onVictim = runs.filter((r) => r.replica === victim.url);
  t.diagnostic(`streams per replica ${JSON.stringify([...counts])}; killing ${victim.url}`);
  assert.ok(onVictim.every((r) => r.finish === null && !r.error), 'its streams were still running when it died');
  assert.equal(await victim.kill9(), 'SIGKILL');

  // The front ends every stream, one way or the other.
  const state = (r) => `stream on ${r.replica}${r.replica === victim.url ? ' (killed)' : ''}: ${r.chunks} chunks, ` +
    `finish ${r.finish}, error ${r.error?.constructor?.name} ${r.error?.message}`;
  runs.forEach((r) => r.done.then(() => (r.ended = true)));
  const open = await within(Promise.all(runs.map((r) => r.done)).then(() => false), 60000, () => true);
  if (open) {
    const m = await scrape(rr);
    assert.fail('a stream was still open 60 s after the kill:\n' +
      runs.map((r) => (r.ended ? '' : 'OPEN ') + state(r)).join('\n') +
      `\nup ${value(m, 'kvgate_route_replica_up', { replica: victim.url })}, stream errors ` +
      `${value(m, 'kvgate_route_stream_errors_total', { replica: victim.url })}`);
  }
  for (const r of runs) {
    const what = state(r);
    if (r.replica === victim.url) {
      assert.ok(r.error instanceof OpenAI.APIError, `an error frame, thrown by the client as an APIError: ${what}`);
      assert.notEqual(r.finish, 'length', what);
    } else {
      assert.equal(r.error, null, what);
      assert.equal(r.finish, 'length', what);
      assert.equal(r.usage?.completion_tokens, maxTokens, what);
    }
  }
  assert.ok(onVictim.length >= 1);

  const m = await waitUp(rr, [victim.url], 0, 5000);
  assert.ok(value(m, 'kvgate_route_stream_errors_total', { replica: victim.url }) >= onVictim.length,
    `kvgate_route_stream_errors_total for ${victim.url}: ${value(m, 'kvgate_route_stream_errors_total', { replica: victim.url })}`);
  // Out of rotation: what is sent now runs on the replicas left.
  for (let i = 0; i < 3; i++) {
    const r = await complete(demoRr, `Once upon a time, again ${i},`);
    assert.notEqual(r.replica, victim.url);
    assert.notEqual(r.replica, deadA?.url);
  }
  // Every stream is in the front's ledger, those cut short with what they used.
  const u = await waitFor(async () => {
    const x = await usageOf(rr, rr.apiKey);
    return x.requests >= usageBefore.requests + 1 + N + 3 && x;
  }, { timeoutMs: 10000, what: 'the streams and the requests around them in the ledger' });
  assert.equal(u.requests, usageBefore.requests + 1 + N + 3);
  const finished = 64 + runs.filter((r) => r.replica !== victim.url).length * maxTokens;
  assert.ok(u.completion_tokens - usageBefore.completion_tokens >= finished + onVictim.length,
    `the streams cut short are billed what they generated: ${u.completion_tokens - usageBefore.completion_tokens}`);
});

test('a replica that died unnoticed: requests placed on it are retried elsewhere before their first token', async (t) => {
  // A front that checks health only every minute still believes the dead
  // replica is up: whatever it places there finds it unreachable and runs
  // on the other, and the client sees only successes.
  const pair = await Promise.all([cluster.startReplica(), cluster.startReplica()]);
  const front = await cluster.startFront(pair, { router: 'round_robin', healthIntervalMs: 60000 });
  await waitUp(front, pair.map((r) => r.url));
  const client = clientFor(front);
  const [dead, alive] = pair;
  await dead.kill9();
  const placed = [];
  for (let i = 0; i < 4; i++) {
    const r = await complete(client, `Once upon a time, retried ${i},`);
    // A whole response names where it ran, after any retry.
    assert.equal(r.replica, alive.url);
    placed.push(r.replica);
  }
  t.diagnostic(`placed on ${placed.join(', ')}`);
  const m = await scrape(front);
  assert.ok(value(m, 'kvgate_route_retries_total', { replica: dead.url }) >= 1, 'a request moved away from the dead replica');
  assert.equal(value(m, 'kvgate_route_replica_up', { replica: dead.url }), 0, 'taken out of rotation by the request that found it dead');
  assert.equal(value(m, 'kvgate_route_replica_up', { replica: alive.url }), 1);
  assert.equal(await within(front.stop(), 15000, () => 'hung'), 0);
});
