// The bill, replayed: 200 mixed requests from several tenants (chat,
// completions, the Responses API and Anthropic's Messages API with
// cache_control breakpoints, streamed and not, some cancelled mid-stream by
// their clients, some refused by a tenant's quota) through the real server
// and the official openai and @anthropic-ai/sdk clients. Afterwards every request the server accepted has
// exactly one ledger record; what each record says is what its client was
// told in usage, to the token (DESIGN invariant 8); prompt = cached + fresh
// in every record (invariant 4); and each tenant's ledger totals are the sum
// of its records.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { agentFetch } from './agent_fetch.mjs';
import { startServer } from './server.mjs';

let server;
const model = 'stories260K';
const prompts = [
  'Once upon a time, there was a little girl named Lily. She loved to play outside in the sunshine.',
  'One day, a boy named Tom went to the park with his mom. He saw a big red ball under a tree.',
  'The cat sat on the mat and looked at the bird in the sky.',
  'Once upon a time',
];

async function admin(method, route, body) {
  const r = await server.request(method, route, {
    headers: { authorization: `Bearer ${server.adminToken}`, 'content-type': 'application/json' },
    body,
  });
  return { status: r.status, json: r.body ? JSON.parse(r.body) : null };
}

async function tenant(id, quotas) {
  assert.equal((await admin('POST', '/admin/tenants', { id, plan_id: 'demo', quotas })).status, 201);
  const key = await admin('POST', `/admin/tenants/${id}/keys`, {});
  return { id, key: key.json.api_key };
}

before(async () => {
  // Breakpoints as short as these prompts still write and pin.
  server = await startServer(['--min-cache-breakpoint-tokens', '16']);
});
after(async () => server && (await server.stop()));

// A Responses request (one in ten of the completions, streamed or not, as
// its kind says); its usage in chat's names, for the comparison below.
async function sendResponse(client, i, prompt, stream) {
  const body = { model, input: prompt, max_output_tokens: 6 + (i % 7), temperature: i % 2 ? 0.8 : 0, stream };
  let res;
  try {
    res = await client.responses.create(body).withResponse();
  } catch (e) {
    if (e instanceof OpenAI.RateLimitError) return { refused: true };
    throw e;
  }
  const id = res.response.headers.get('x-request-id');
  let u = res.data.usage;
  if (stream) {
    for await (const event of res.data) {
      if (event.type === 'response.completed' || event.type === 'response.incomplete') u = event.response.usage;
    }
  }
  return { id, usage: { prompt_tokens: u.input_tokens, prompt_tokens_details: u.input_tokens_details,
                        completion_tokens: u.output_tokens, kvgate: u.kvgate } };
}

// A Messages request with a breakpoint on its question (one in ten);
// streamed, its usage is the message_delta event's, which carries kvgate's
// object too. Its usage in chat's names, with the pinned writes.
async function sendMessage(client, i, prompt, stream) {
  const body = { model, max_tokens: 6 + (i % 7), temperature: i % 2 ? 0.8 : 0, stream,
    messages: [{ role: 'user', content: [{ type: 'text', text: prompt,
      cache_control: { type: 'ephemeral', ttl: i % 4 === 1 ? '1h' : '5m' } }] }] };
  let res;
  try {
    res = await client.messages.create(body).withResponse();
  } catch (e) {
    if (e instanceof Anthropic.RateLimitError) return { refused: true };
    throw e;
  }
  const id = res.response.headers.get('x-request-id');
  let u = res.data.usage;
  if (stream) {
    for await (const event of res.data) if (event.type === 'message_delta') u = event.usage;
  }
  return { id, written: u.cache_creation_input_tokens,
           usage: { prompt_tokens: u.input_tokens + u.cache_creation_input_tokens + u.cache_read_input_tokens,
                    prompt_tokens_details: { cached_tokens: u.cache_read_input_tokens },
                    completion_tokens: u.output_tokens, kvgate: u.kvgate } };
}

// One request of a kind; resolves to what its client saw.
async function send(client, anthropic, i) {
  const kind = i % 5;
  const prompt = prompts[i % prompts.length] + (i % 3 === 0 ? '' : ` (${i})`);
  const chat = kind === 2 || kind === 3;
  const stream = kind === 1 || kind === 3 || kind === 4;
  if (i % 10 === 5 || i % 10 === 8) return sendResponse(client, i, prompt, stream);
  if (i % 10 === 7 || i % 10 === 9) return sendMessage(anthropic, i, prompt, stream);
  const body = chat
    ? { model, messages: [{ role: 'user', content: prompt }], max_tokens: 6 + (i % 7), temperature: i % 2 ? 0.8 : 0 }
    : { model, prompt, max_tokens: 6 + (i % 7), temperature: i % 2 ? 0.8 : 0, seed: i };
  if (stream) Object.assign(body, { stream: true, stream_options: { include_usage: true } });
  if (kind === 4) Object.assign(body, { max_tokens: 1500, ignore_eos: true });
  const api = chat ? client.chat.completions : client.completions;
  const controller = new AbortController();
  let res;
  try {
    res = await api.create(body, { signal: controller.signal }).withResponse();
  } catch (e) {
    if (e instanceof OpenAI.RateLimitError) return { refused: true };
    throw e;
  }
  const id = res.response.headers.get('x-request-id');
  if (!stream) return { id, usage: res.data.usage };
  let usage = null;
  let n = 0;
  for await (const chunk of res.data) {
    if (chunk.usage) usage = chunk.usage;
    if (kind === 4 && ++n === 3) controller.abort();  // the client goes away mid-stream
  }
  return kind === 4 ? { id, cancelled: true } : { id, usage };
}

test('200 mixed requests: the ledger says what the clients were told, to the token', async () => {
  const tenants = [
    { id: 'demo', key: server.apiKey },
    await tenant('alpha', {}),
    await tenant('beta', {}),
    await tenant('tight', { requests_per_minute: 20 }),  // most of its requests are refused
  ];
  const clients = tenants.map((t) =>
    new OpenAI({ apiKey: t.key, baseURL: server.baseUrl + '/v1', httpAgent: server.agent, maxRetries: 0 }));
  const anthropics = tenants.map((t) =>
    new Anthropic({ apiKey: t.key, baseURL: server.baseUrl, fetch: agentFetch(server.agent), maxRetries: 0 }));
  const results = [];
  for (let i = 0; i < 200; i += 8) {
    const batch = [];
    for (let j = i; j < Math.min(i + 8, 200); ++j) batch.push(send(clients[j % 4], anthropics[j % 4], j).then((r) => ({ ...r, t: j % 4 })));
    results.push(...(await Promise.all(batch)));
  }
  assert.ok(results.some((r) => r.refused), 'the tight tenant was refused');
  assert.ok(results.some((r) => r.cancelled), 'some streams were cancelled');
  assert.ok(results.some((r) => r.written > 0), 'some breakpoints wrote the cache');

  // Cancelled requests end at the engine's next step; wait until none is left.
  for (let k = 0; k < 200; ++k) {
    if ((await admin('GET', '/admin/cache')).json.requests_in_flight === 0) break;
    await new Promise((r) => setTimeout(r, 25));
  }
  const sums = tenants.map(() => ({ requests: 0, prompt: 0, cached: 0, fresh: 0, completion: 0, cost: 0 }));
  for (const r of results) {
    if (r.refused) continue;
    const rec = await admin('GET', `/admin/requests/${r.id}`);
    assert.equal(rec.status, 200, `request ${r.id} has a ledger record`);
    const l = rec.json;
    assert.equal(l.tenant_id, tenants[r.t].id);
    assert.equal(l.prompt_tokens, l.cached_tokens + l.fresh_prefill_tokens, 'prompt = cached + fresh');
    if (r.cancelled) {
      assert.equal(l.finish_reason, 'cancelled');
      assert.ok(l.completion_tokens < 1500, 'cut short by the client');
    } else {
      assert.equal(l.prompt_tokens, r.usage.prompt_tokens);
      assert.equal(l.cached_tokens, r.usage.prompt_tokens_details.cached_tokens);
      assert.equal(l.completion_tokens, r.usage.completion_tokens);
      assert.equal(l.fresh_prefill_tokens, r.usage.kvgate.fresh_prefill_tokens);
      assert.equal(l.cache_written_tokens, r.usage.kvgate.cache_written_tokens);
      assert.equal(l.cost_micros, r.usage.kvgate.cost_micros);
      if (r.written !== undefined)
        assert.equal(l.cache_write_tokens_by_ttl['5m'] + l.cache_write_tokens_by_ttl['1h'], r.written);
    }
    const s = sums[r.t];
    s.requests += 1;
    s.prompt += l.prompt_tokens;
    s.cached += l.cached_tokens;
    s.fresh += l.fresh_prefill_tokens;
    s.completion += l.completion_tokens;
    s.cost += l.cost_micros;
  }
  for (let t = 0; t < tenants.length; ++t) {
    const u = JSON.parse((await server.request('GET', '/v1/usage', {
      headers: { authorization: `Bearer ${tenants[t].key}` } })).body);
    const s = sums[t];
    assert.deepEqual(
      [u.requests, u.prompt_tokens, u.cached_tokens, u.fresh_prefill_tokens, u.completion_tokens, u.cost_micros],
      [s.requests, s.prompt, s.cached, s.fresh, s.completion, s.cost],
      `tenant ${tenants[t].id}: the ledger's totals are the sum of what its requests were billed`);
  }
});
