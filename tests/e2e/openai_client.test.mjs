// The real server, over TLS on loopback, driven by the official openai
// client as a user would: chat and completions, streaming and not, the
// usage chunk, cached tokens on a repeat, errors by their client classes,
// a stream the client aborts (its blocks back in the pool afterwards), and
// tenant isolation of the cache.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import OpenAI from 'openai';
import { startServer } from './server.mjs';

let server;
let client;
const model = 'stories260K';
const story = 'Once upon a time, there was a little girl named Lily. She loved to play outside in the sunshine ' +
  'with her dog and her friends, and every day she went to the park to look at the flowers and the birds.';

function clientFor(apiKey) {
  return new OpenAI({ apiKey, baseURL: server.baseUrl + '/v1', httpAgent: server.agent, maxRetries: 0 });
}

async function admin(method, route, body) {
  const r = await server.request(method, route, {
    headers: { authorization: `Bearer ${server.adminToken}`, 'content-type': 'application/json' },
    body,
  });
  return { status: r.status, json: r.body ? JSON.parse(r.body) : null };
}

async function newTenant(id, quotas = {}) {
  assert.equal((await admin('POST', '/admin/tenants', { id, plan_id: 'demo', quotas })).status, 201);
  const key = await admin('POST', `/admin/tenants/${id}/keys`, { label: 'e2e' });
  assert.equal(key.status, 201);
  return clientFor(key.json.api_key);
}

before(async () => {
  server = await startServer();
  client = clientFor(server.apiKey);
});
after(async () => {
  if (!server) return;
  assert.equal(await server.stop(), 0, 'SIGTERM ends the server cleanly');
  assert.match(server.lines.at(-1), /stopped; every finished request is in the ledger/);
});

test('chat completion, not streamed', async () => {
  const r = await client.chat.completions.create({
    model, messages: [{ role: 'user', content: 'Tell me a story.' }], max_tokens: 12, temperature: 0,
  });
  assert.equal(r.object, 'chat.completion');
  assert.equal(r.choices.length, 1);
  assert.equal(r.choices[0].message.role, 'assistant');
  assert.ok(r.choices[0].message.content.length > 0);
  assert.ok(['stop', 'length'].includes(r.choices[0].finish_reason));
  assert.equal(r.usage.total_tokens, r.usage.prompt_tokens + r.usage.completion_tokens);
  assert.ok(r.usage.completion_tokens <= 12);
});

test('completion, streamed, with the final usage chunk', async () => {
  const stream = await client.completions.create({
    model, prompt: 'Once upon a time', max_tokens: 16, temperature: 0, stream: true,
    stream_options: { include_usage: true },
  });
  let text = '';
  let usage = null;
  let finish = null;
  for await (const chunk of stream) {
    if (chunk.usage) {
      usage = chunk.usage;
      assert.deepEqual(chunk.choices, []);
    }
    for (const c of chunk.choices) {
      text += c.text;
      if (c.finish_reason) finish = c.finish_reason;
    }
  }
  assert.ok(text.length > 0);
  assert.equal(finish, 'length');
  assert.equal(usage.completion_tokens, 16);
  const plain = await client.completions.create({ model, prompt: 'Once upon a time', max_tokens: 16, temperature: 0 });
  assert.equal(plain.choices[0].text, text, 'streamed and not streamed give the same greedy text');
});

test('chat, streamed', async () => {
  const stream = await client.chat.completions.create({
    model, messages: [{ role: 'user', content: 'Hello' }], max_tokens: 8, temperature: 0, stream: true,
  });
  let text = '';
  let role = null;
  for await (const chunk of stream) {
    const d = chunk.choices[0]?.delta ?? {};
    if (d.role) role = d.role;
    if (d.content) text += d.content;
  }
  assert.equal(role, 'assistant');
  assert.ok(text.length > 0);
});

test('a repeated long prompt reports cached tokens', async () => {
  // Earlier greedy answers may already have cached this prompt's first
  // block (stories260K tells the same story), so compare the two requests.
  const ask = () => client.completions.create({ model, prompt: story, max_tokens: 4, temperature: 0 });
  const first = await ask();
  const second = await ask();
  const cached = (r) => r.usage.prompt_tokens_details?.cached_tokens ?? 0;
  assert.ok(cached(second) > cached(first));
  assert.ok(cached(second) >= second.usage.prompt_tokens - 16, 'every full block of the prompt hits');
  assert.equal(second.usage.prompt_tokens, first.usage.prompt_tokens);
  assert.equal(second.usage.kvgate.fresh_prefill_tokens, second.usage.prompt_tokens - cached(second));
});

test('a bad key is an AuthenticationError', async () => {
  await assert.rejects(clientFor('kvg-not-a-key').models.list(), OpenAI.AuthenticationError);
});

test('a tenant over its quota gets a RateLimitError with retry-after', async () => {
  const tight = await newTenant('tight', { requests_per_minute: 1 });
  const { response } = await tight.completions.create({ model, prompt: 'Once', max_tokens: 2 }).withResponse();
  // OpenAI's header counts the request it answers: 1 a minute, 0 left.
  assert.equal(response.headers.get('x-ratelimit-remaining-requests'), '0');
  await assert.rejects(tight.completions.create({ model, prompt: 'Once', max_tokens: 2 }), (e) => {
    assert.ok(e instanceof OpenAI.RateLimitError);
    assert.ok(Number(e.headers['retry-after']) >= 1);
    assert.ok(e.headers['x-ratelimit-limit-requests']);
    return true;
  });
});

test('tenants never share cached blocks, and cache_salt splits a scope', async () => {
  const other = await newTenant('other');
  const prompt = story + ' The end.';
  await client.completions.create({ model, prompt, max_tokens: 2 });
  const a = await other.completions.create({ model, prompt, max_tokens: 2 });
  assert.equal(a.usage.prompt_tokens_details?.cached_tokens ?? 0, 0, "another tenant's first request hits nothing");
  const b = await other.completions.create({ model, prompt, max_tokens: 2 });
  assert.ok(b.usage.prompt_tokens_details.cached_tokens > 0, 'its own second request hits');
  const salted = await other.completions.create({ model, prompt, max_tokens: 2, cache_salt: 'user-1' });
  assert.equal(salted.usage.prompt_tokens_details?.cached_tokens ?? 0, 0);
});

test('a stream the client aborts is cancelled and its blocks return to the pool', async () => {
  const usage = async () => JSON.parse((await server.request('GET', '/v1/usage', {
    headers: { authorization: `Bearer ${server.apiKey}` } })).body);
  const before = await usage();
  const controller = new AbortController();
  // ignore_eos (vLLM's extension) keeps it generating until it is cancelled.
  const stream = await client.completions.create(
    { model, prompt: story, max_tokens: 1800, temperature: 0, stream: true, ignore_eos: true },
    { signal: controller.signal },
  );
  let n = 0;
  // The openai client ends the iteration quietly on its own abort.
  for await (const chunk of stream) {
    if (++n === 3) controller.abort();
  }
  assert.ok(n >= 3);
  let cache;
  // The cancel reaches the engine at its next step once the server sees the
  // connection gone; on a loaded machine (the sanitizer build, other suites
  // in parallel) that can take seconds, so poll for up to 30 s.
  for (let i = 0; i < 300; ++i) {
    cache = (await admin('GET', '/admin/cache')).json;
    if (cache.blocks_in_use === 0 && cache.requests_in_flight === 0) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.equal(cache.blocks_in_use, 0);
  assert.equal(cache.requests_in_flight, 0);
  assert.equal(cache.blocks_in_use + cache.blocks_cached_free + cache.blocks_free, cache.blocks_total);
  // It was cut short, and what it did was still billed. The engine lets go
  // of a request before its ledger record is synced (a durable-queue
  // thread writes it), so the record may land a moment after the blocks.
  let after;
  for (let i = 0; i < 300; ++i) {
    after = await usage();
    if (after.requests !== before.requests) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.equal(after.requests, before.requests + 1);
  assert.ok(after.completion_tokens - before.completion_tokens < 1800);
});
