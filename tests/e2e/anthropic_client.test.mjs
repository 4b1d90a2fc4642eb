// Anthropic's Messages API on the real server, over TLS on loopback, driven
// by the official @anthropic-ai/sdk as a user would: a message, streamed
// both ways the SDK offers, count_tokens, a stop sequence, a tool_use
// round trip (stories260K through the generic tool prompt, the call forced
// by tool_choice "any"), errors by their SDK classes, and usage that is the
// ledger's: input_tokens + cache_creation_input_tokens +
// cache_read_input_tokens is the prompt, which count_tokens counts, and a
// repeat reads its prefix from the cache; cache_control breakpoints write
// and pin (a 1 h one and a 5 m one), bill by the plan's write prices, and
// never hit another tenant's identical prefix.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import { agentFetch } from './agent_fetch.mjs';
import { startServer } from './server.mjs';

let server;
let client;
const model = 'stories260K';
const story = 'Once upon a time, there was a little girl named Lily. She loved to play outside in the sunshine ' +
  'with her dog and her friends, and every day she went to the park to look at the flowers and the birds.';

function clientFor(options) {
  return new Anthropic({ baseURL: server.baseUrl, fetch: agentFetch(server.agent), maxRetries: 0, ...options });
}

async function admin(method, route, body) {
  const r = await server.request(method, route, {
    headers: { authorization: `Bearer ${server.adminToken}`, 'content-type': 'application/json' },
    body,
  });
  return { status: r.status, json: r.body ? JSON.parse(r.body) : null };
}

async function newTenantKey(id, quotas = {}) {
  assert.equal((await admin('POST', '/admin/tenants', { id, plan_id: 'demo', quotas })).status, 201);
  const key = await admin('POST', `/admin/tenants/${id}/keys`, { label: 'e2e' });
  assert.equal(key.status, 201);
  return key.json.api_key;
}

// The ledger's record of the request a response's x-request-id names.
async function ledgerOf(response) {
  const r = await admin('GET', `/admin/requests/${response.headers.get('x-request-id')}`);
  assert.equal(r.status, 200);
  return r.json;
}

function assertUsageIsLedgers(usage, record) {
  assert.equal(usage.input_tokens + usage.cache_creation_input_tokens + usage.cache_read_input_tokens,
    record.prompt_tokens);
  assert.equal(usage.cache_read_input_tokens, record.cached_tokens);
  const written = record.cache_write_tokens_by_ttl;
  assert.equal(usage.cache_creation_input_tokens, written['5m'] + written['1h']);
  if (usage.cache_creation) {  // the streamed final message carries only the totals
    assert.equal(usage.cache_creation.ephemeral_5m_input_tokens, written['5m']);
    assert.equal(usage.cache_creation.ephemeral_1h_input_tokens, written['1h']);
  }
  assert.equal(usage.output_tokens, record.completion_tokens);
}

// The record's cost under `plan` (tenancy/prices.h): each part at its price,
// summed in micro-units per million tokens, rounded half up once.
function priced(plan, record) {
  const w5 = BigInt(record.cache_write_tokens_by_ttl['5m']), w1 = BigInt(record.cache_write_tokens_by_ttl['1h']);
  const fresh = BigInt(record.fresh_prefill_tokens) - w5 - w1;
  const sum = fresh * BigInt(plan.fresh_input_per_mtok) + w5 * BigInt(plan.cache_write_5m_per_mtok) +
    w1 * BigInt(plan.cache_write_1h_per_mtok) + BigInt(record.cached_tokens) * BigInt(plan.cached_input_per_mtok) +
    BigInt(record.cache_written_tokens) * BigInt(plan.cache_write_per_mtok) +
    BigInt(record.completion_tokens) * BigInt(plan.output_per_mtok);
  return Number((sum + 500000n) / 1000000n);
}

// A prefix breakpoints may write: the server's minimum is lowered to fit
// stories260K's 512-token context (Anthropic's is 1024).
const kMinBreakpointTokens = 64;

before(async () => {
  server = await startServer(['--min-cache-breakpoint-tokens', String(kMinBreakpointTokens)]);
  client = clientFor({ apiKey: server.apiKey });
});
after(async () => {
  if (!server) return;
  assert.equal(await server.stop(), 0, 'SIGTERM ends the server cleanly');
});

const storyParams = { model, system: 'You tell stories.', messages: [{ role: 'user', content: story }] };

test('a message, not streamed, its usage the ledger\'s and count_tokens\' count', async () => {
  const params = storyParams;
  const counted = await client.messages.countTokens(params);
  assert.ok(counted.input_tokens > 40);
  const { data: m, response } = await client.messages.create({ ...params, max_tokens: 12, temperature: 0 }).withResponse();
  assert.match(m.id, /^msg_/);
  assert.equal(m.type, 'message');
  assert.equal(m.role, 'assistant');
  assert.equal(m.model, model);
  assert.equal(m.content.length, 1);
  assert.equal(m.content[0].type, 'text');
  assert.ok(m.content[0].text.length > 0);
  assert.ok(['end_turn', 'max_tokens'].includes(m.stop_reason));
  assert.equal(m.stop_sequence, null);
  assert.ok(m.usage.output_tokens <= 12);
  assert.equal(m.usage.input_tokens + m.usage.cache_read_input_tokens, counted.input_tokens);
  assertUsageIsLedgers(m.usage, await ledgerOf(response));

  // The same prompt again: its full blocks come from the cache, as reads.
  const { data: again, response: r2 } = await client.messages.create({ ...params, max_tokens: 4 }).withResponse();
  assert.ok(again.usage.cache_read_input_tokens >= 32, JSON.stringify(again.usage));
  assert.equal(again.usage.input_tokens + again.usage.cache_read_input_tokens, counted.input_tokens);
  assertUsageIsLedgers(again.usage, await ledgerOf(r2));
});

test('messages.stream: text events, the final message and its usage', async () => {
  const stream = client.messages.stream({ ...storyParams, max_tokens: 10 });
  const types = [];
  let text = '';
  stream.on('streamEvent', (e) => types.push(e.type));
  stream.on('text', (t) => (text += t));
  const m = await stream.finalMessage();
  assert.equal(types[0], 'message_start');
  assert.equal(types.at(-1), 'message_stop');
  assert.equal(types.at(-2), 'message_delta');
  assert.ok(types.includes('content_block_start') && types.includes('content_block_delta'));
  assert.equal(m.content[0].type, 'text');
  assert.equal(m.content[0].text, text);
  assert.ok(['end_turn', 'max_tokens'].includes(m.stop_reason));
  const counted = await client.messages.countTokens(storyParams);
  // message_delta's usage replaced message_start's: the final split.
  assert.equal(m.usage.input_tokens + m.usage.cache_read_input_tokens, counted.input_tokens);
  assert.ok(m.usage.cache_read_input_tokens > 0, 'the story was cached by the first test');
  assert.ok(m.usage.output_tokens >= 1 && m.usage.output_tokens <= 10);
});

test('create({stream: true}) yields Anthropic\'s events in order', async () => {
  const stream = await client.messages.create({
    model, max_tokens: 6, stream: true, messages: [{ role: 'user', content: 'Once upon a time' }],
  });
  const events = [];
  for await (const e of stream) events.push(e);
  // (The SDK drops ping events; the wire test below sees it.)
  assert.equal(events[0].type, 'message_start');
  assert.equal(events[0].message.role, 'assistant');
  assert.deepEqual(events[0].message.content, []);
  assert.deepEqual(events.slice(-3).map((e) => e.type), ['content_block_stop', 'message_delta', 'message_stop']);
  const deltas = events.filter((e) => e.type === 'content_block_delta');
  assert.ok(deltas.every((e) => e.index === 0 && e.delta.type === 'text_delta'));
  const last = events.at(-2);
  assert.ok(['end_turn', 'max_tokens'].includes(last.delta.stop_reason));
  assert.ok(last.usage.output_tokens >= 1);
});

test('the wire: event lines and data as Anthropic writes them', async () => {
  const r = await server.request('POST', '/v1/messages', {
    headers: { 'x-api-key': server.apiKey, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
    body: { model, max_tokens: 3, stream: true, messages: [{ role: 'user', content: 'Hello' }] },
  });
  assert.equal(r.status, 200);
  assert.match(r.headers['content-type'], /^text\/event-stream/);
  const frames = r.body.split('\n\n').filter((f) => f.length > 0);
  assert.deepEqual(frames.slice(0, 2).map((f) => f.split('\n')[0]), ['event: message_start', 'event: ping']);
  assert.deepEqual(frames.slice(-2).map((f) => f.split('\n')[0]), ['event: message_delta', 'event: message_stop']);
  for (const f of frames) {
    const m = f.match(/^event: (\w+)\ndata: (.*)$/s);
    assert.ok(m, `a frame of an event line and a data line: ${JSON.stringify(f)}`);
    assert.equal(JSON.parse(m[2]).type, m[1]);
  }
});

test('a stop sequence ends the message with stop_reason stop_sequence', async () => {
  const params = { model, max_tokens: 40, temperature: 0, messages: [{ role: 'user', content: 'Once upon a time' }] };
  const free = await client.messages.create(params);
  const words = free.content[0].text.trim().split(/\s+/);
  assert.ok(words.length >= 3, free.content[0].text);
  const stop = ' ' + words[2];
  const cut = await client.messages.create({ ...params, stop_sequences: ['never-there', stop] });
  assert.equal(cut.stop_reason, 'stop_sequence');
  assert.equal(cut.stop_sequence, stop);
  assert.ok(!cut.content[0].text.includes(stop));
});

const weather = {
  name: 'get_weather',
  description: 'The weather in a city.',
  input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};

test('tool_use round trip: a forced call, then its result', async () => {
  const ask = { role: 'user', content: 'What is the weather in Paris?' };
  const m = await client.messages.create({
    model, max_tokens: 1000, tools: [weather], tool_choice: { type: 'tool', name: 'get_weather' }, messages: [ask],
  });
  assert.equal(m.stop_reason, 'tool_use');
  const call = m.content.find((b) => b.type === 'tool_use');
  assert.ok(call, JSON.stringify(m.content));
  assert.match(call.id, /^toolu_/);
  assert.equal(call.name, 'get_weather');
  assert.equal(typeof call.input.city, 'string');

  // Streamed, the call is a tool_use block with its input as input_json_delta.
  const stream = client.messages.stream({
    model, max_tokens: 1000, tools: [weather], tool_choice: { type: 'any' }, messages: [ask],
  });
  const streamed = await stream.finalMessage();
  assert.equal(streamed.stop_reason, 'tool_use');
  const sc = streamed.content.find((b) => b.type === 'tool_use');
  assert.equal(sc.name, 'get_weather');
  assert.equal(typeof sc.input.city, 'string');

  const next = await client.messages.create({
    model, max_tokens: 8, tools: [weather], tool_choice: { type: 'none' },
    messages: [ask, { role: 'assistant', content: m.content },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: 'Sunny, 21 C.' }] }],
  });
  assert.equal(next.content[0].type, 'text');
  assert.ok(['end_turn', 'max_tokens'].includes(next.stop_reason));
});

// A long system prompt with a 1 h breakpoint, the question with a 5 m one.
function breakpointParams(topic) {
  const system = `You tell stories about ${topic}. ` + story.repeat(3);
  return {
    model, max_tokens: 4, temperature: 0,
    system: [{ type: 'text', text: system, cache_control: { type: 'ephemeral', ttl: '1h' } }],
    messages: [{ role: 'user', content: [{ type: 'text', text: `Tell me one about ${topic}.`,
      cache_control: { type: 'ephemeral' } }] }],
  };
}

test('cache_control: the first call writes the breakpoints, the second reads them; each billed by the plan', async () => {
  const plans = (await admin('GET', '/admin/plans')).json.data;
  const plan = plans.find((p) => p.id === 'demo');
  assert.ok(plan.cache_write_5m_per_mtok > plan.fresh_input_per_mtok, 'a write costs more than fresh input');
  const key = await newTenantKey('e2e-breakpoints');
  const tenant = clientFor({ apiKey: key });
  const params = breakpointParams('a dragon');
  const counted = (await tenant.messages.countTokens({ model, system: params.system, messages: params.messages }))
    .input_tokens;
  assert.ok(counted > 2 * kMinBreakpointTokens, `a prompt of ${counted} tokens`);

  const { data: first, response: r1 } = await tenant.messages.create(params).withResponse();
  const u1 = first.usage;
  assert.ok(u1.cache_creation_input_tokens > 0, JSON.stringify(u1));
  assert.equal(u1.cache_read_input_tokens, 0, JSON.stringify(u1));
  assert.ok(u1.cache_creation.ephemeral_1h_input_tokens >= kMinBreakpointTokens, JSON.stringify(u1));
  assert.ok(u1.cache_creation.ephemeral_5m_input_tokens > 0, 'the question adds blocks past the system prompt');
  assert.equal(u1.input_tokens + u1.cache_creation_input_tokens + u1.cache_read_input_tokens, counted);
  const rec1 = await ledgerOf(r1);
  assertUsageIsLedgers(u1, rec1);
  assert.equal(rec1.cost_micros, priced(plan, rec1));
  assert.equal(u1.kvgate.cost_micros, rec1.cost_micros);

  // The same request, streamed: what the first wrote is read, nothing written.
  const stream = tenant.messages.stream(params);
  const second = await stream.finalMessage();
  const u2 = second.usage;
  assert.equal(u2.cache_creation_input_tokens, 0, JSON.stringify(u2));
  assert.equal(u2.cache_read_input_tokens, u1.cache_creation_input_tokens, JSON.stringify(u2));
  assert.equal(u2.input_tokens + u2.cache_read_input_tokens, counted);
  assert.match(stream.request_id, /^req_/, 'the request-id header names the ledger record');
  const rec2 = await ledgerOf({ headers: new Map([['x-request-id', stream.request_id]]) });
  assertUsageIsLedgers(u2, rec2);
  assert.equal(rec2.cost_micros, priced(plan, rec2));

  // Another tenant's identical request finds nothing of the first's.
  const other = clientFor({ apiKey: await newTenantKey('e2e-breakpoints-2') });
  const u3 = (await other.messages.create(params)).usage;
  assert.equal(u3.cache_read_input_tokens, 0, JSON.stringify(u3));
  assert.equal(u3.cache_creation_input_tokens, u1.cache_creation_input_tokens);

  // A short prefix is no breakpoint: below the minimum nothing is written.
  const short = await tenant.messages.create({ model, max_tokens: 2,
    messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi.', cache_control: { type: 'ephemeral' } }] }] });
  assert.equal(short.usage.cache_creation_input_tokens, 0, JSON.stringify(short.usage));
});

test('errors in Anthropic\'s shape, by the SDK\'s classes', async () => {
  await assert.rejects(
    clientFor({ apiKey: 'kvg-not-a-key' }).messages.create({ model, max_tokens: 2, messages: [{ role: 'user', content: 'x' }] }),
    (e) => e instanceof Anthropic.AuthenticationError && e.status === 401 && e.error.type === 'error' &&
      e.error.error.type === 'authentication_error');
  // The key as a bearer token works too.
  const bearer = clientFor({ apiKey: null, authToken: server.apiKey });
  assert.ok((await bearer.messages.countTokens({ model, messages: [{ role: 'user', content: 'x' }] })).input_tokens > 0);
  await assert.rejects(
    client.messages.create({ model, max_tokens: 2, messages: [{ role: 'user', content: 'x' }], top_k: -3 }),
    (e) => e instanceof Anthropic.BadRequestError && e.error.error.type === 'invalid_request_error' &&
      /top_k/.test(e.error.error.message));
  const marked = (text) => ({ type: 'text', text, cache_control: { type: 'ephemeral' } });
  await assert.rejects(
    client.messages.create({ model, max_tokens: 2, system: [marked('a'), marked('b')],
      messages: [{ role: 'user', content: [marked('c'), marked('d'), marked('e')] }] }),
    (e) => e instanceof Anthropic.BadRequestError && /messages\[0\]\.content\[2\]\.cache_control/.test(e.error.error.message) &&
      /maximum of 4/.test(e.error.error.message));
  await assert.rejects(
    client.messages.create({ model: 'nope', max_tokens: 2, messages: [{ role: 'user', content: 'x' }] }),
    (e) => e instanceof Anthropic.NotFoundError && e.error.error.type === 'not_found_error');
  const noVersion = await server.request('POST', '/v1/messages', {
    headers: { 'x-api-key': server.apiKey, 'content-type': 'application/json' },
    body: { model, max_tokens: 2, messages: [{ role: 'user', content: 'x' }] },
  });
  assert.equal(noVersion.status, 400);
  assert.deepEqual(JSON.parse(noVersion.body),
    { type: 'error', error: { type: 'invalid_request_error', message: 'anthropic-version: header is required' } });

  const tight = clientFor({ apiKey: await newTenantKey('tight', { requests_per_minute: 1 }) });
  const params = { model, max_tokens: 2, messages: [{ role: 'user', content: 'Once' }] };
  await tight.messages.create(params);
  await assert.rejects(tight.messages.create(params), (e) => {
    assert.ok(e instanceof Anthropic.RateLimitError, String(e));
    assert.equal(e.error.error.type, 'rate_limit_error');
    assert.ok(Number(e.headers.get('retry-after')) >= 1);
    return true;
  });
  // count_tokens runs nothing on the engine and is not billed, but it
  // tokenizes: it takes a request from requests/minute like any other, so
  // past the limit it is refused before its body is read.
  await assert.rejects(tight.messages.countTokens({ model, messages: params.messages }),
    (e) => e instanceof Anthropic.RateLimitError);
});
