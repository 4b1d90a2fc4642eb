// A pin flood against the real server (issue 38): one tenant pins distinct
// prompts for an hour (`prompt_cache_retention: "24h"`) until the server's
// cap on pinned blocks refuses it with a 429 that names the cap; the pool's
// pinned share never passes the cap, and another tenant's request is still
// admitted and served while the pins hold the pool at it. No timing: each
// step asserts what happened, not how long it took.
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

async function tenant(id) {
  assert.equal((await admin('POST', '/admin/tenants', { id, plan_id: 'demo' })).status, 201);
  const key = (await admin('POST', `/admin/tenants/${id}/keys`, {})).json.api_key;
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
