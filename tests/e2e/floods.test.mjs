// Floods against the real server (issue 38), each beside a quiet tenant
// that must still be served. No timing: each step asserts what happened
// and in which order, not how long it took.
//
// A scrape flood: waves of 150 /dashboard/data and /metrics requests at
// once, each answered or, past the side pool's 64 queued, shed with 503 and
// retry-after (never an error or a hang); the quiet tenant's requests are
// served and billed while the flood is in flight, and the admin routes (a
// pool of their own) answer too.
//
// A usage scan flood: waves of 150 /v1/usage calls at once from one
// tenant, over the longest periods it may ask (366 days of totals, pages of
// days from the epoch, and past the bound a 400); each is answered, shed or
// refused, and the quiet tenant is served meanwhile; afterwards its own
// usage adds up to what it was told, token for token.
//
// A pin flood: one tenant pins distinct
// prompts for an hour (`prompt_cache_retention: "24h"`) until the server's
// cap on pinned blocks refuses it with a 429 that names the cap; the pool's
// pinned share never passes the cap, and another tenant's request is still
// admitted and served while the pins hold the pool at it.
//
// The flooding tenant's own pin quota is lifted (--tenant-pinned-percent
// 100), so that the server-wide cap (50% of the pool, the default) is the
// bound it meets; the small pool (--kv-budget 2MiB, about a hundred blocks
// of stories260K) keeps the flood short.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import OpenAI from 'openai';
import { startServer } from './server.mjs';

const model = 'stories260K';
let server;

async function admin(method, route, body) {
  const r = await server.request(method, route, {
    headers: { authorization: `Bearer ${server.adminToken}`, 'content-type': 'application/json' },
    body,
  });
  return { status: r.status, json: r.body ? JSON.parse(r.body) : null };
}

async function newKey(id) {
  assert.equal((await admin('POST', '/admin/tenants', { id, plan_id: 'demo' })).status, 201);
  return (await admin('POST', `/admin/tenants/${id}/keys`, {})).json.api_key;
}

async function tenant(id) {
  const key = await newKey(id);
  return new OpenAI({ apiKey: key, baseURL: server.baseUrl + '/v1', httpAgent: server.agent, maxRetries: 0 });
}

// A distinct prompt of about a hundred tokens: its first block differs from every other's.
function story(i) {
  return `Story number ${i}. Once upon a time, there was a little girl named Lily. She loved to play outside ` +
    'in the sunshine with her dog and her friends, and every day she went to the park to look at the flowers, ' +
    'the birds and the big old tree by the pond, where the ducks swam in the cool water.';
}

before(async () => {
  server = await startServer(['--kv-budget', '2MiB', '--tenant-pinned-percent', '100']);
});
after(async () => server && assert.equal(await server.stop(), 0));

test('a scrape flood, answered or shed with 503, delays neither the bill nor the admin routes', async (t) => {
  const scraperKey = await newKey('scraper');
  const quiet = await tenant('quiet-scrapes');
  const scrapes = { 200: 0, 503: 0 };
  let inFlight = 0;
  const scrape = async (i) => {
    const route = i % 2 ? '/dashboard/data' : '/metrics';
    const bearer = i % 2 ? scraperKey : server.adminToken;
    ++inFlight;
    const r = await server.request('GET', route, { headers: { authorization: `Bearer ${bearer}` } });
    --inFlight;
    assert.ok(r.status === 200 || r.status === 503, `${route}: ${r.status} ${r.body.slice(0, 200)}`);
    if (r.status === 503) {
      assert.equal(r.headers['retry-after'], '1');
      const e = JSON.parse(r.body).error;
      assert.equal(e.code, 'overloaded');
      assert.match(e.message, /side work queue is full/);
    }
    ++scrapes[r.status];
  };
  // Waves of 150 scrapes at once (far past the queue's 64): at least four,
  // and on until the quiet tenant is done.
  let quietDone = false;
  const flood = (async () => {
    for (let wave = 0; wave < 4 || !quietDone; ++wave) {
      await Promise.all(Array.from({ length: 150 }, (_, i) => scrape(i)));
    }
  })();

  // The quiet tenant, meanwhile: each request served, billed, and told so
  // while scrapes are in flight.
  for (let i = 0; i < 4; ++i) {
    const { data: r, response } = await quiet.completions
      .create({ model, prompt: story(500 + i), max_tokens: 8, temperature: 0, ignore_eos: true })
      .withResponse();
    assert.ok(inFlight > 0, `request ${i} was answered while the flood was: ${JSON.stringify(scrapes)}`);
    assert.equal(r.usage.completion_tokens, 8);
    const rec = await admin('GET', `/admin/requests/${response.headers.get('x-request-id')}`);
    assert.equal(rec.status, 200, 'its ledger record is written before its usage is sent');
    assert.equal(rec.json.completion_tokens, 8, JSON.stringify(rec.json));
  }
  const tenants = await admin('GET', '/admin/tenants');
  assert.equal(tenants.status, 200, 'the admin routes answer from their own pool');
  assert.ok(inFlight > 0, 'and they answered while the flood was in flight');
  quietDone = true;
  await flood;
  assert.ok(scrapes[200] > 0, `scrapes were answered: ${JSON.stringify(scrapes)}`);
  // How many were shed depends on how fast this machine answers a scrape
  // (each reads the engine's published stats, never waiting for a step):
  // 14 of 900 in Release and 414 of 1,200 under ASan on the 2-core build
  // VM. That a full queue sheds is asserted where it is deterministic
  // (AdminApiTest, MetricsApiTest and HttpApiTest against a full pool).
  t.diagnostic(`scrapes answered ${scrapes[200]}, shed ${scrapes[503]}`);
});

test('a usage scan flood over the longest periods is answered a page at a time, and another tenant is served', async (t) => {
  const scannerKey = await newKey('scanner');
  const quiet = await tenant('quiet-usage');
  const now = Math.floor(Date.now() / 1000);
  const targets = [
    `/v1/usage?start_time=${now - 366 * 86400}&end_time=${now}`,
    '/v1/usage?bucket_width=1d&limit=31&start_time=0',
    `/v1/usage?bucket_width=1h&limit=168&start_time=${now - 7 * 86400}`,
    '/v1/usage?start_time=0',
  ];
  const seen = { 200: 0, 400: 0, 503: 0 };
  let inFlight = 0;
  const scan = async (i) => {
    const target = targets[i % targets.length];
    ++inFlight;
    const r = await server.request('GET', target, { headers: { authorization: `Bearer ${scannerKey}` } });
    --inFlight;
    ++seen[r.status];
    if (target.endsWith('start_time=0') && !target.includes('bucket')) {
      assert.equal(r.status, 400, 'refused before anything is queued: ' + r.body);
      assert.equal(JSON.parse(r.body).error.param, 'start_time');
      return;
    }
    assert.ok(r.status === 200 || r.status === 503, `${target}: ${r.status} ${r.body.slice(0, 200)}`);
    if (r.status !== 200) return;
    const u = JSON.parse(r.body);
    if (u.object === 'page') {
      assert.ok(u.data.length >= 1 && u.data.length <= 168, `${target}: ${u.data.length} buckets`);
      if (target.includes('start_time=0')) assert.equal(u.has_more, true, 'the epoch is many pages ago');
    }
  };
  let quietDone = false;
  const flood = (async () => {
    for (let wave = 0; wave < 4 || !quietDone; ++wave) {
      await Promise.all(Array.from({ length: 150 }, (_, i) => scan(i)));
    }
  })();

  let told = 0;
  for (let i = 0; i < 4; ++i) {
    const r = await quiet.completions.create({ model, prompt: story(700 + i), max_tokens: 8, temperature: 0, ignore_eos: true });
    assert.ok(inFlight > 0, `request ${i} was answered while the flood was: ${JSON.stringify(seen)}`);
    told += r.usage.prompt_tokens + r.usage.completion_tokens;
  }
  quietDone = true;
  await flood;
  assert.ok(seen[200] > 0 && seen[400] > 0, JSON.stringify(seen));
  // Its own usage shares the side pool with the flood (during it, a 503 to
  // retry); after it, the rollups add up to what it was told.
  const own = await server.request('GET', '/v1/usage', { headers: { authorization: `Bearer ${quiet.apiKey}` } });
  assert.equal(own.status, 200, own.body);
  const u = JSON.parse(own.body);
  assert.equal(u.requests, 4);
  assert.equal(u.prompt_tokens + u.completion_tokens, told, 'its usage is what it was told');
  t.diagnostic(`usage calls answered ${seen[200]}, refused ${seen[400]}, shed ${seen[503]}`);
});

test('a pin flood stops at the server cap with a 429 naming it, and another tenant is still served', async () => {
  const flooder = await tenant('flooder');
  const quiet = await tenant('quiet');
  const total = (await admin('GET', '/admin/cache')).json.blocks_total;
  const cap = Math.floor(total / 2);
  assert.ok(total > 0);

  // Pin until the server says no. A pin that races past the gateway's
  // check (the engine publishes its pin count between steps) is refused by
  // the engine instead: a 200 whose usage says cache_pin.refused.
  let pins = 0, raced = 0, refusal;
  for (let i = 0; i < 3 * cap && !refusal; ++i) {
    try {
      const r = await flooder.completions.create({
        model, prompt: story(i), max_tokens: 2, temperature: 0, prompt_cache_retention: '24h',
      });
      const pin = r.usage.kvgate.cache_pin;
      assert.ok(pin, JSON.stringify(r.usage));
      pin.refused ? ++raced : ++pins;
    } catch (e) {
      if (!(e instanceof OpenAI.APIError) || e.status !== 429) throw e;
      refusal = e;
    }
    const pinned = (await admin('GET', '/admin/cache')).json.blocks_pinned;
    assert.ok(pinned <= cap, `after pin ${i}: ${pinned} blocks pinned, the cap is ${cap} of ${total}`);
  }
  assert.ok(refusal, `no 429 after ${pins} pins (${raced} refused by the engine)`);
  assert.match(refusal.message, /server's cap on pinned KV blocks/);
  assert.match(refusal.message, new RegExp(`max_pinned_percent: ${cap} blocks`));
  assert.ok(pins > 1, `only ${pins} pins fit under a cap of ${cap} blocks`);

  // The pool's pinned share is at the cap (no further prompt of this size fits).
  const stats = (await admin('GET', '/admin/cache')).json;
  assert.ok(stats.blocks_pinned <= cap && stats.blocks_pinned > cap - 8, JSON.stringify(stats));

  // Another tenant is admitted and served, with a prompt longer than the
  // flooder's and all the output it asks for.
  const served = await quiet.completions.create({
    model, prompt: story(1000) + ' ' + story(1001), max_tokens: 32, temperature: 0, ignore_eos: true,
  });
  assert.equal(served.usage.completion_tokens, 32);
  assert.equal(served.choices[0].finish_reason, 'length');

  // Its own pin does not fit beside the flood either: a 429, never a stall.
  await assert.rejects(
    quiet.completions.create({ model, prompt: story(2000), max_tokens: 2, temperature: 0, cache_ttl: '1h' }),
    (e) => e.status === 429 && /server's cap on pinned KV blocks/.test(e.message));
  // And it is still served without one.
  const again = await quiet.completions.create({ model, prompt: story(2000), max_tokens: 4, temperature: 0 });
  assert.ok(again.choices[0].text.length > 0);
});
