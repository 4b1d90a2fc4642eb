// OpenAI's Responses API on the real server, over TLS on loopback, driven
// by the official openai client as a user would: a three-turn conversation
// carried by previous_response_id, streamed and not, each later turn's
// prompt read from the cache the turn before left; retrieve and delete;
// store: false keeping nothing; another tenant's id not found.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import OpenAI from 'openai';
import { startServer } from './server.mjs';

let server;
let client;
const model = 'stories260K';
const blockSize = 16;  // kvgate serve's default --block-size

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

// The prompt ids a chat of `messages` renders to: what a turn's rebuilt
// conversation must be, token for token.
async function promptIds(messages) {
  const r = await server.request('POST', '/tokenize', {
    headers: { authorization: `Bearer ${server.apiKey}`, 'content-type': 'application/json' },
    body: { model, messages },
  });
  assert.equal(r.status, 200, r.body);
  return JSON.parse(r.body).tokens;
}

// The text a streamed response said, and its completed (or incomplete)
// response, checking the events' order and sequence numbers on the way.
async function readStream(stream) {
  const types = [];
  let text = '';
  let final = null;
  let seq = 0;
  for await (const event of stream) {
    assert.equal(event.sequence_number, seq++);
    types.push(event.type);
    if (event.type === 'response.output_text.delta') text += event.delta;
    if (event.type === 'response.output_text.done') assert.equal(event.text, text);
    if (event.type === 'response.completed' || event.type === 'response.incomplete') final = event.response;
  }
  assert.deepEqual(types.slice(0, 4), ['response.created', 'response.in_progress', 'response.output_item.added',
                                       'response.content_part.added']);
  assert.deepEqual(types.slice(-4, -1), ['response.output_text.done', 'response.content_part.done',
                                         'response.output_item.done']);
  assert.ok(final, 'the stream ended with the response');
  return { text, response: final };
}

before(async () => {
  server = await startServer();
  client = clientFor(server.apiKey);
});
after(async () => {
  if (!server) return;
  assert.equal(await server.stop(), 0, 'SIGTERM ends the server cleanly');
});

test('three turns by previous_response_id, each reading the last one\'s prefix from the cache', async (t) => {
  const turns = ['Tell me a story about a little dog who found a big red ball in the park.',
    'What did the dog do with the ball next?', 'And how did the story end?'];
  const messages = [{ role: 'system', content: 'You tell short stories.' }];
  let previous = null;
  let last = null;  // the last turn's prompt ids and usage
  for (const [i, input] of turns.entries()) {
    const params = { model, input, max_output_tokens: 6, temperature: 0, previous_response_id: previous ?? undefined };
    // Instructions apply to their own request only, so each turn sends them again.
    params.instructions = messages[0].content;
    let r;
    let text;
    if (i === 1) {
      ({ text, response: r } = await readStream(await client.responses.create({ ...params, stream: true })));
    } else {
      r = await client.responses.create(params);
      text = r.output_text;
    }
    assert.match(r.id, /^resp_/);
    assert.equal(r.object, 'response');
    assert.ok(['completed', 'incomplete'].includes(r.status));
    assert.equal(r.previous_response_id, previous);
    assert.equal(r.output[0].content[0].text, text);
    assert.ok(text.length > 0);

    messages.push({ role: 'user', content: input });
    const u = r.usage;
    assert.equal(u.total_tokens, u.input_tokens + u.output_tokens);
    assert.equal(u.output_tokens_details.reasoning_tokens, 0);
    const cached = u.input_tokens_details.cached_tokens;
    if (!previous) {
      assert.equal(u.input_tokens, (await promptIds(messages)).length, 'a first turn is its chat, rendered and encoded');
    } else {
      // The server continues from the ids the last turn ran, its prompt then
      // the tokens the model generated (not the answer's text tokenized
      // again, which a tokenizer often splits into other pieces), so the
      // cache holds every full block of them: all of the last prompt and
      // answer but the last sampled token, which a length-limited turn never
      // ran through the model (one that stopped on its own ran it, to sample
      // the end).
      const ran = last.input_tokens + last.output_tokens - (last.status === 'incomplete' ? 1 : 0);
      const blocks = Math.floor(ran / blockSize) * blockSize;
      t.diagnostic(`turn ${i + 1}: cached ${cached} of ${u.input_tokens}; the last turn ran ${ran} (${last.status})`);
      assert.ok(u.input_tokens > last.input_tokens + last.output_tokens, 'this prompt extends the last one and its answer');
      assert.equal(cached, blocks, `every full block the last turn ran hits: ${blocks}`);
      assert.equal(u.kvgate.fresh_prefill_tokens, u.input_tokens - cached);
    }
    messages.push({ role: 'assistant', content: text });
    last = { input_tokens: u.input_tokens, output_tokens: u.output_tokens, status: r.status };
    const { output_text: _, ...created } = r;  // the SDK's convenience field, not the server's
    const { output_text: __, ...stored } = await client.responses.retrieve(r.id);
    assert.deepEqual(stored, created, 'GET answers the response as it was created');
    previous = r.id;
  }
});

test('store: false keeps nothing to retrieve or continue', async () => {
  const r = await client.responses.create({ model, input: 'Hello', max_output_tokens: 2, store: false });
  assert.equal(r.store, false);
  await assert.rejects(client.responses.retrieve(r.id), OpenAI.NotFoundError);
  await assert.rejects(client.responses.create({ model, input: 'Again', previous_response_id: r.id }),
                       OpenAI.NotFoundError);
});

test('delete, then retrieve and delete again are not found', async () => {
  const r = await client.responses.create({ model, input: 'Hello', max_output_tokens: 2 });
  await client.responses.del(r.id);
  await assert.rejects(client.responses.retrieve(r.id), OpenAI.NotFoundError);
  await assert.rejects(client.responses.del(r.id), OpenAI.NotFoundError);
});

test("another tenant's response is not found, as an unknown one", async () => {
  const r = await client.responses.create({ model, input: 'Hello', max_output_tokens: 2 });
  assert.equal((await admin('POST', '/admin/tenants', { id: 'responses-other', plan_id: 'demo' })).status, 201);
  const key = await admin('POST', '/admin/tenants/responses-other/keys', { label: 'e2e' });
  const other = clientFor(key.json.api_key);
  await assert.rejects(other.responses.retrieve(r.id), OpenAI.NotFoundError);
  await assert.rejects(other.responses.del(r.id), OpenAI.NotFoundError);
  await assert.rejects(other.responses.create({ model, input: 'Hi', previous_response_id: r.id }), (e) => {
    assert.ok(e instanceof OpenAI.NotFoundError);
    assert.equal(e.param, 'previous_response_id');
    return true;
  });
  assert.ok(await client.responses.retrieve(r.id), 'still there for its own tenant');
});

test('what changes the answer and kvgate does not serve is a 400 naming it', async () => {
  await assert.rejects(client.responses.create({ model, input: 'Hi', tools: [{ type: 'web_search_preview' }] }), (e) => {
    assert.ok(e instanceof OpenAI.BadRequestError);
    assert.equal(e.param, 'tools');
    return true;
  });
  await assert.rejects(client.responses.create({ model, input: 'Hi', reasoning: { effort: 'low' } }),
                       OpenAI.BadRequestError);
});
