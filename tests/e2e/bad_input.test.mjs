// Bad input against the real `kvgate serve` (issue 10, "Done when" 4): a
// table of requests a client should not send, each answered as
// docs/gateway.md says (the status and OpenAI's error shape, with its type,
// param and code), and after every row the server still serves another
// client normally, with no KV block and no request left in flight. Around
// the table, the server's open file descriptors come back to what they were
// (no leaked connection). Then, each on a server of its own: a slow-loris
// client under a short read timeout, connections held without a key from
// one address, and 1,000 requests in a burst past the engine's queue bound.
//
// Raw requests go over sockets of their own (raw_client.mjs) so that what
// is malformed reaches the server as sent. Every wait is a bounded poll, a
// guard against a hang; nothing asserts on timing.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import https from 'node:https';
import tls from 'node:tls';
import { after, before, describe, test } from 'node:test';
import OpenAI from 'openai';
import {
  exchange, fdCount, hostPort, httpsRequest, serverPid, sleep, writeSome,
} from './raw_client.mjs';
import { startServer } from './server.mjs';

const model = 'stories260K';

// What one started server offers the rows: raw requests, admin reads, a
// normal request from another client, and the fd count of its process.
async function harness(args) {
  const server = await startServer(args);
  const ca = readFileSync(server.certFile);
  const { host, port } = hostPort(server.baseUrl);
  const pid = serverPid(server.dataDir);
  const auth = { authorization: `Bearer ${server.apiKey}`, 'content-type': 'application/json' };
  const h = {
    server, ca, host, port, pid, auth,
    post: (route, body, headers = auth) => httpsRequest(server.baseUrl, ca, 'POST', route, { headers, body }),
    get: (route, headers = auth) => httpsRequest(server.baseUrl, ca, 'GET', route, { headers }),
    admin: (method, route, body) => httpsRequest(server.baseUrl, ca, method, route, {
      headers: { authorization: `Bearer ${server.adminToken}`, 'content-type': 'application/json' }, body,
    }),
    raw: (send, opts = {}) => exchange({ host, port, ca, send, ...opts }),
    // The official client on connections of its own, closed after each request.
    client: (apiKey = server.apiKey) => new OpenAI({
      apiKey, baseURL: server.baseUrl + '/v1', maxRetries: 0,
      httpAgent: new https.Agent({ ca, keepAlive: false }),
    }),
  };
  // Another client is served normally: a short greedy completion.
  h.servesNormally = async (apiKey) => {
    const r = await h.client(apiKey).completions.create({ model, prompt: 'Once upon a time', max_tokens: 4, temperature: 0 });
    assert.equal(r.object, 'text_completion');
    assert.ok(r.choices[0].text.length > 0);
    assert.equal(r.usage.completion_tokens, 4);
  };
  // Once idle, no KV block is held and no request is in flight.
  h.idleCache = async () => {
    let cache;
    for (let i = 0; i < 200; ++i) {  // guard: the cancel reaches the engine at its next step
      const r = await h.admin('GET', '/admin/cache');
      assert.equal(r.status, 200, r.body);
      cache = r.json;
      if (cache.blocks_in_use === 0 && cache.requests_in_flight === 0) break;
      await sleep(25);
    }
    assert.equal(cache.blocks_in_use, 0, 'no KV block leaked');
    assert.equal(cache.requests_in_flight, 0, 'no request left in flight');
    assert.equal(cache.blocks_in_use + cache.blocks_cached_free + cache.blocks_free, cache.blocks_total);
    return cache;
  };
  h.healthy = async () => {
    await h.servesNormally();
    await h.idleCache();
  };
  // The process's descriptors come back to `baseline` once every client
  // has closed; a closing connection may linger (close_linger) first.
  h.fdsBackTo = async (baseline, slack = 2) => {
    let n = fdCount(pid);
    for (let i = 0; i < 200 && n > baseline; ++i) {  // guard only
      await sleep(50);
      n = fdCount(pid);
    }
    assert.ok(n <= baseline + slack, `open fds ${n}, ${baseline} before: connections leaked`);
  };
  return h;
}

// OpenAI's error shape: exactly {message, type, param, code}, JSON.
function assertError(r, { status, type = 'invalid_request_error', code, param = null, message }) {
  assert.equal(r.status, status, `status ${r.status}: ${r.body}`);
  assert.match(r.headers['content-type'] ?? '', /^application\/json/);
  const body = JSON.parse(r.body);
  assert.deepEqual(Object.keys(body), ['error']);
  assert.deepEqual(Object.keys(body.error).sort(), ['code', 'message', 'param', 'type']);
  assert.equal(typeof body.error.message, 'string');
  assert.ok(body.error.message.length > 0);
  assert.equal(body.error.type, type);
  assert.equal(body.error.code, code);
  assert.equal(body.error.param, param);
  if (message) assert.match(body.error.message, message);
  return body.error;
}

const chat = (fields = {}) => ({ model, messages: [{ role: 'user', content: 'Hello' }], max_tokens: 4, ...fields });
const completion = (fields = {}) => ({ model, prompt: 'Once upon a time', max_tokens: 4, ...fields });
const CHAT = '/v1/chat/completions';
const COMPLETIONS = '/v1/completions';
const RESPONSES = '/v1/responses';
const MESSAGES = '/v1/messages';

// What the Messages API needs besides the body: the key, the version.
const anthropicHeaders = (h) =>
  ({ 'x-api-key': h.server.apiKey, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' });

// Anthropic's error shape: exactly {type: "error", error: {type, message}}.
function assertAnthropicError(r, { status, type = 'invalid_request_error', message }) {
  assert.equal(r.status, status, `status ${r.status}: ${r.body}`);
  assert.match(r.headers['content-type'] ?? '', /^application\/json/);
  const body = JSON.parse(r.body);
  assert.deepEqual(Object.keys(body).sort(), ['error', 'type']);
  assert.equal(body.type, 'error');
  assert.deepEqual(Object.keys(body.error).sort(), ['message', 'type']);
  assert.equal(body.error.type, type);
  assert.match(body.error.message, message);
}

// A request head for raw sockets.
function head(h, method, route, extra = []) {
  return [`${method} ${route} HTTP/1.1`, 'Host: localhost', `Authorization: Bearer ${h.server.apiKey}`, ...extra, '', '']
    .join('\r\n');
}

// Writes `total` bytes of `byte` in 64 KiB pieces of one reused buffer,
// until they are all sent or the server answers or closes: never more than
// one piece in memory. Resolves with the count sent.
async function stream(socket, state, total, byte = 0x20) {
  const piece = Buffer.alloc(64 * 1024, byte);
  let sent = 0;
  while (sent < total && (await writeSome(socket, state, piece.subarray(0, Math.min(piece.length, total - sent))))) {
    sent += Math.min(piece.length, total - sent);
  }
  return sent;
}

// A raw exchange's connection ended without a byte of HTTP coming back.
function assertClosedSilently(x) {
  assert.equal(x.timedOut, false, 'the server closed the connection');
  assert.equal(x.response, null);
  assert.ok(!x.bytes.toString('latin1').startsWith('HTTP/'), 'no HTTP answer');
}

describe('bad input, row by row', () => {
  let h;
  let fdsBefore;

  before(async () => {
    h = await harness();
    await h.healthy();
    fdsBefore = fdCount(h.pid);
  });
  after(async () => h && (await h.server.stop()));

  const rows = [
    {
      name: 'malformed JSON',
      send: () => h.post(CHAT, '{"model": "stories260K", "messages": ['),
      expect: { status: 400, code: 'invalid_json', message: /line 1, column \d+/ },
    },
    {
      name: 'a body that is JSON but not an object',
      send: () => h.post(COMPLETIONS, '[1, 2, 3]'),
      expect: { status: 400, code: 'invalid_json' },
    },
    {
      name: 'an empty body',
      send: () => h.post(CHAT, ''),
      expect: { status: 400, code: 'invalid_json' },
    },
    {
      name: 'temperature as a string',
      send: () => h.post(CHAT, chat({ temperature: 'hot' })),
      expect: { status: 400, code: 'invalid_type', param: 'temperature' },
    },
    {
      name: 'max_tokens as a string',
      send: () => h.post(COMPLETIONS, completion({ max_tokens: '16' })),
      expect: { status: 400, code: 'invalid_type', param: 'max_tokens' },
    },
    {
      name: 'messages as a string',
      send: () => h.post(CHAT, chat({ messages: 'Hello' })),
      expect: { status: 400, code: 'invalid_type', param: 'messages' },
    },
    {
      name: 'stream as a string',
      send: () => h.post(CHAT, chat({ stream: 'yes' })),
      expect: { status: 400, code: 'invalid_type', param: 'stream' },
    },
    {
      name: 'missing model',
      send: () => h.post(CHAT, { messages: [{ role: 'user', content: 'Hello' }] }),
      expect: { status: 400, code: 'missing_required_parameter', param: 'model' },
    },
    {
      name: 'unknown model',
      send: () => h.post(CHAT, chat({ model: 'gpt-9' })),
      expect: { status: 404, code: 'model_not_found', param: 'model' },
    },
    {
      name: 'empty messages',
      send: () => h.post(CHAT, chat({ messages: [] })),
      expect: { status: 400, code: 'empty_array', param: 'messages' },
    },
    {
      name: 'unknown role',
      send: () => h.post(CHAT, chat({ messages: [{ role: 'wizard', content: 'Hello' }] })),
      expect: { status: 400, code: 'invalid_value', param: 'messages[0].role' },
    },
    {
      name: 'a prompt over the context (2048 tokens)',
      send: () => h.post(COMPLETIONS, completion({ prompt: 'Once upon a time there was a girl. '.repeat(400) })),
      expect: { status: 400, code: 'context_length_exceeded', param: 'prompt', message: /2048/ },
    },
    {
      name: 'a chat prompt over the context',
      send: () => h.post(CHAT, chat({ messages: [{ role: 'user', content: 'Once upon a time there was a girl. '.repeat(400) }] })),
      expect: { status: 400, code: 'context_length_exceeded', param: 'messages', message: /2048/ },
    },
    {
      name: 'max_tokens over the context',
      send: () => h.post(COMPLETIONS, completion({ max_tokens: 100000 })),
      // the documented rule: prompt + max_tokens over the context, never clamped
      expect: { status: 400, code: 'context_length_exceeded', param: 'prompt', message: /100000 in the completion/ },
    },
    {
      name: 'max_tokens 0',
      send: () => h.post(COMPLETIONS, completion({ max_tokens: 0 })),
      expect: { status: 400, code: 'invalid_value', param: 'max_tokens' },
    },
    {
      name: 'n = 2',
      send: () => h.post(CHAT, chat({ n: 2 })),
      expect: { status: 400, code: 'invalid_value', param: 'n' },
    },
    {
      name: 'invalid UTF-8 in a JSON string',
      send: () => h.post(CHAT, Buffer.concat([
        Buffer.from('{"model":"stories260K","messages":[{"role":"user","content":"caf'),
        Buffer.from([0xc3, 0x28]),  // a lead byte without its continuation
        Buffer.from('"}],"max_tokens":4}'),
      ])),
      expect: { status: 400, code: 'invalid_utf8', message: /byte \d+/ },
    },
    {
      name: 'a lone surrogate escape',
      // The JSON parser refuses it (docs/gateway.md's Errors table).
      send: () => h.post(CHAT, '{"model":"stories260K","messages":[{"role":"user","content":"\\ud800"}]}'),
      expect: { status: 400, code: 'invalid_json' },
    },
    {
      name: 'no API key',
      send: () => h.post(CHAT, chat(), { 'content-type': 'application/json' }),
      expect: { status: 401, type: 'authentication_error', code: 'invalid_api_key' },
    },
    {
      name: 'an invalid API key',
      send: () => h.post(CHAT, chat(), { authorization: 'Bearer kvg-not-a-key', 'content-type': 'application/json' }),
      expect: { status: 401, type: 'authentication_error', code: 'invalid_api_key' },
    },
    {
      name: 'a tenant key on /admin',
      send: () => h.get('/admin/cache'),
      expect: { status: 403, type: 'permission_error', code: 'permission_denied' },
    },
    {
      name: 'an unknown route',
      send: () => h.post('/v1/nothing', chat()),
      expect: { status: 404, code: 'unknown_url', message: /POST \/v1\/nothing/ },
    },
    {
      name: 'a known route with the wrong method',
      send: () => h.get(CHAT),
      expect: { status: 405, code: 'method_not_allowed' },
    },
    {
      name: '/v1/usage totals over more than 366 days',
      send: () => h.get('/v1/usage?start_time=0'),
      expect: { status: 400, code: 'invalid_value', param: 'start_time' },
    },
    {
      name: '/v1/usage with a bucket_width it does not serve',
      send: () => h.get('/v1/usage?bucket_width=1w'),
      expect: { status: 400, code: 'invalid_value', param: 'bucket_width' },
    },
    {
      name: '/v1/usage with a page of 169 hours',
      send: () => h.get('/v1/usage?bucket_width=1h&limit=169'),
      expect: { status: 400, code: 'invalid_value', param: 'limit' },
    },
    {
      name: '/v1/usage with a page outside its period',
      send: () => h.get('/v1/usage?bucket_width=1d&start_time=100&end_time=200&page=50'),
      expect: { status: 400, code: 'invalid_value', param: 'page' },
    },
    {
      name: 'a 100 MB body (Content-Length 100000000, streamed until the server answers)',
      send: async () => {
        let sent = 0;
        const x = await h.raw(async (socket, state) => {
          socket.write(head(h, 'POST', COMPLETIONS, ['Content-Type: application/json', 'Content-Length: 100000000']));
          sent = await stream(socket, state, 100_000_000);
        });
        assert.equal(x.timedOut, false);
        assert.ok(x.response, 'an answer, not a reset');
        assert.ok(sent < 100_000_000, 'answered from Content-Length, before the body');
        assert.equal(x.response.headers.connection, 'close');
        return x.response;
      },
      // docs/gateway.md, "The server's own answers"
      expect: { status: 413, code: 'body_too_large' },
    },
    {
      name: 'a 1 MB header',
      send: async () => {
        const x = await h.raw(async (socket, state) => {
          if (!(await writeSome(socket, state, 'GET /health HTTP/1.1\r\nHost: localhost\r\nX-Big: '))) return;
          if ((await stream(socket, state, 1 << 20, 0x61)) < 1 << 20) return;
          await writeSome(socket, state, '\r\n\r\n');
        });
        assert.equal(x.timedOut, false);
        assert.ok(x.response, 'an answer, not a reset');
        assert.equal(x.response.headers.connection, 'close');
        return x.response;
      },
      expect: { status: 431, code: 'header_too_large' },
    },
    {
      name: 'a malformed request line over TLS',
      send: async () => {
        const x = await h.raw((socket) => socket.write('THIS IS NOT HTTP\r\n\r\n'));
        assert.ok(x.response, 'an answer');
        return x.response;
      },
      expect: { status: 400, code: 'bad_request' },
    },
    {
      name: 'conflicting Content-Length headers',
      send: async () => {
        const x = await h.raw((socket) => socket.write(
          head(h, 'POST', COMPLETIONS, ['Content-Type: application/json', 'Content-Length: 5', 'Content-Length: 7'])
          + '{"a":1}'));
        assert.ok(x.response, 'an answer');
        return x.response;
      },
      expect: { status: 400, code: 'bad_request' },
    },
    {
      name: 'Content-Length with Transfer-Encoding: chunked',
      send: async () => {
        const x = await h.raw((socket) => socket.write(
          head(h, 'POST', COMPLETIONS, ['Content-Type: application/json', 'Content-Length: 4', 'Transfer-Encoding: chunked'])
          + '0\r\n\r\n'));
        assert.ok(x.response, 'an answer');
        return x.response;
      },
      expect: { status: 400, code: 'bad_request' },
    },
    {
      name: 'a chunked body past the limit (streamed until the server answers)',
      send: async () => {
        let sent = 0;
        const x = await h.raw(async (socket, state) => {
          socket.write(head(h, 'POST', COMPLETIONS, ['Content-Type: application/json', 'Transfer-Encoding: chunked']));
          const piece = Buffer.concat([Buffer.from('10000\r\n'), Buffer.alloc(0x10000, 0x20), Buffer.from('\r\n')]);
          while (sent < 100_000_000 && (await writeSome(socket, state, piece))) sent += 0x10000;
        });
        assert.equal(x.timedOut, false);
        assert.ok(x.response, 'an answer, not a reset');
        assert.ok(sent < 100_000_000);
        assert.equal(x.response.headers.connection, 'close');
        return x.response;
      },
      expect: { status: 413, code: 'body_too_large' },
    },
    {
      name: 'Expect: 100-continue with a body over the limit',
      send: async () => {
        const x = await h.raw((socket) => socket.write(
          head(h, 'POST', COMPLETIONS, ['Content-Type: application/json', 'Content-Length: 100000000', 'Expect: 100-continue'])));
        assert.equal(x.timedOut, false);
        assert.deepEqual(x.interim, [], 'no 100 Continue for a body that does not fit');
        assert.ok(x.response);
        return x.response;
      },
      expect: { status: 413, code: 'body_too_large' },
    },
    {
      name: 'a malformed chunk size',
      send: async () => {
        const x = await h.raw((socket) => socket.write(
          head(h, 'POST', COMPLETIONS, ['Content-Type: application/json', 'Transfer-Encoding: chunked']) + 'zz\r\nabc\r\n0\r\n\r\n'));
        assert.ok(x.response, 'an answer');
        return x.response;
      },
      expect: { status: 400, code: 'bad_request' },
    },
    {
      name: 'an unsupported HTTP version',
      send: async () => (await h.raw((socket) => socket.write('GET /health HTTP/2.0\r\nHost: localhost\r\n\r\n'))).response,
      expect: { status: 400, code: 'bad_request' },
    },
    {
      name: 'a NUL byte in a header value',
      send: async () => (await h.raw((socket) => socket.write('GET /health HTTP/1.1\r\nHost: localhost\r\nX-A: a\0b\r\n\r\n'))).response,
      expect: { status: 400, code: 'bad_request' },
    },
    {
      name: 'a Responses request with an unknown field',
      send: () => h.post(RESPONSES, { model, input: 'Hello', frobnicate: 1 }),
      expect: { status: 400, code: 'unknown_parameter', param: 'frobnicate', message: /frobnicate/ },
    },
    {
      name: 'a Responses request with a field of an empty name (no empty param)',
      send: () => h.post(RESPONSES, { model, input: 'Hello', '': 1 }),
      expect: { status: 400, code: 'unknown_parameter', message: /empty name/ },
    },
    {
      name: 'a previous_response_id never issued',
      send: () => h.post(RESPONSES, { model, input: 'Hello', previous_response_id: 'resp_0123456789abcdef01234567' }),
      expect: { status: 404, type: 'not_found_error', code: 'not_found', param: 'previous_response_id',
                message: /resp_0123456789abcdef01234567/ },
    },
    {
      name: "another tenant's previous_response_id is not found, as an unknown one",
      send: async () => {
        const first = await h.post(RESPONSES, { model, input: 'Hello', max_output_tokens: 2 });
        assert.equal(first.status, 200, first.body);
        const { id } = JSON.parse(first.body);
        assert.equal((await h.admin('POST', '/admin/tenants', { id: 'responses-other', plan_id: 'demo' })).status, 201);
        const key = JSON.parse((await h.admin('POST', '/admin/tenants/responses-other/keys', { label: 'e2e' })).body);
        const other = { authorization: `Bearer ${key.api_key}`, 'content-type': 'application/json' };
        assert.equal((await h.get(`${RESPONSES}/${id}`, other)).status, 404);
        return h.post(RESPONSES, { model, input: 'Hello', previous_response_id: id }, other);
      },
      expect: { status: 404, type: 'not_found_error', code: 'not_found', param: 'previous_response_id',
                message: /not found/ },
    },
    {
      // Each turn continues the last; the one whose rebuilt conversation
      // passes the context is refused whole, never cut to fit. Long turns
      // (some 130 tokens) reach the 2,048-token context in about 15 of the
      // 100 allowed, which keeps the row quick.
      name: 'a previous_response_id chain past the context',
      send: async () => {
        const input = 'Tell me one more story about the little dog, the big red ball and the tall green tree in the park. '
          .repeat(6);
        let previous;
        for (let turn = 0; turn < 100; ++turn) {
          const r = await h.post(RESPONSES, { model, input, max_output_tokens: 1, previous_response_id: previous });
          if (r.status !== 200) {
            assert.ok(turn > 1, `refused at turn ${turn}: ${r.body}`);
            return r;
          }
          previous = JSON.parse(r.body).id;
        }
        assert.fail('100 turns fit the context');
      },
      expect: { status: 400, code: 'context_length_exceeded', param: 'input' },
    },
    {
      name: 'a Messages request of another anthropic-version',
      send: () => h.post(MESSAGES, { model, max_tokens: 4, messages: [{ role: 'user', content: 'Hello' }] },
        { ...anthropicHeaders(h), 'anthropic-version': '2099-01-01' }),
      anthropic: { status: 400, message: /anthropic-version/ },
    },
    {
      name: 'a Messages request without max_tokens',
      send: () => h.post(MESSAGES, { model, messages: [{ role: 'user', content: 'Hello' }] }, anthropicHeaders(h)),
      anthropic: { status: 400, message: /max_tokens/ },
    },
    {
      name: 'a cache_control breakpoint on an empty text block',
      send: () => h.post(MESSAGES, { model, max_tokens: 4, messages: [{ role: 'user', content: [
        { type: 'text', text: 'Hello' }, { type: 'text', text: '', cache_control: { type: 'ephemeral' } }] }] },
      anthropicHeaders(h)),
      anthropic: { status: 400, message: /messages\[0\]\.content\[1\]\.cache_control.*empty/ },
    },
    {
      name: 'a cache_control breakpoint with an unknown ttl',
      send: () => h.post(MESSAGES, { model, max_tokens: 4, messages: [{ role: 'user', content: [
        { type: 'text', text: 'Hello', cache_control: { type: 'ephemeral', ttl: '24h' } }] }] }, anthropicHeaders(h)),
      anthropic: { status: 400, message: /cache_control\.ttl.*'24h'/ },
    },
    {
      name: 'a malformed request pipelined after a good one',
      send: async () => {
        const body = JSON.stringify(completion({ max_tokens: 2 }));
        const x = await h.raw((socket) => socket.write(
          head(h, 'POST', COMPLETIONS, ['Content-Type: application/json', `Content-Length: ${body.length}`]) + body
          + 'NOT A REQUEST LINE\r\n\r\n'));
        assert.equal(x.timedOut, false, 'closed after the 400');
        assert.equal(x.responses.length, 2, x.bytes.toString('latin1'));
        assert.equal(x.responses[0].status, 200, 'the good one is answered first');
        assert.equal(JSON.parse(x.responses[0].body).object, 'text_completion');
        assert.equal(x.responses[1].headers.connection, 'close');
        return x.responses[1];
      },
      expect: { status: 400, code: 'bad_request' },
    },
    // Every framing but exactly one final "chunked".
    ...['gzip', 'chunked, gzip', 'identity', 'chunked, chunked', 'gzip, chunked'].map((te) => ({
        // RFC 9112 6.1: a request whose Transfer-Encoding does not end in
        // chunked has no reliable length: 400 and close. Anything else lets
        // the body be read as a second request (request smuggling).
        name: `Transfer-Encoding: ${te} is refused, its body never read as a request`,
        send: async () => {
          const smuggled = 'GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n';
          const x = await h.raw((socket) => socket.write(
            head(h, 'POST', COMPLETIONS, ['Content-Type: application/json', `Transfer-Encoding: ${te}`]) + smuggled),
          { endAfter: 2 });
          assert.equal(x.responses.length, 1, 'one answer, not two: ' + x.bytes.toString('latin1'));
          assert.equal(x.closed, true, 'and the connection closed');
          assert.equal(x.response.headers.connection, 'close');
          return x.response;
        },
        expect: { status: 400, code: 'bad_request' },
      })),
    {
      name: 'random bytes instead of a TLS handshake',
      send: async () => {
        const junk = randomBytes(512);
        junk[0] = 0x00;  // neither a handshake (0x16) nor an HTTP method's letter
        const x = await h.raw((socket) => socket.write(junk), { tls: false });
        assertClosedSilently(x);
      },
    },
    {
      name: 'a handshake record header followed by garbage',
      send: async () => {
        const junk = randomBytes(512);
        junk[0] = 0x16;
        const x = await h.raw((socket) => socket.write(junk), { tls: false });
        assertClosedSilently(x);
      },
    },
    {
      name: 'plain HTTP to the TLS port',
      send: async () => {
        const x = await h.raw((socket) => socket.write('GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n'), { tls: false });
        assert.equal(x.timedOut, false);
        assert.ok(x.response, 'an unencrypted HTTP answer');
        assert.match(x.response.body, /HTTPS/);
        assert.equal(x.response.headers.connection, 'close');
        return x.response;
      },
      expect: { status: 400, code: 'https_required', message: /HTTPS/ },
    },
    {
      name: 'a client that disconnects mid-stream',
      send: async () => {
        const chunks = await new Promise((resolve, reject) => {
          const req = https.request(h.server.baseUrl + COMPLETIONS, {
            method: 'POST', headers: h.auth, ca: h.ca, agent: new https.Agent({ ca: h.ca, keepAlive: false }),
          }, (res) => {
            assert.equal(res.statusCode, 200);
            assert.match(res.headers['content-type'], /^text\/event-stream/);
            let frames = 0;
            let text = '';
            res.setEncoding('utf8');
            res.on('data', (d) => {
              text += d;
              frames = (text.match(/^data: /gm) ?? []).length;
              if (frames >= 3) {
                req.destroy();  // the socket goes, mid-stream
                resolve(frames);
              }
            });
            res.on('end', () => reject(new Error('the stream ended before it was cut: ' + text.slice(-200))));
          });
          req.on('error', (e) => (e.code === 'ECONNRESET' ? undefined : reject(e)));
          req.end(JSON.stringify(completion({ max_tokens: 1500, stream: true, ignore_eos: true, temperature: 0 })));
        });
        assert.ok(chunks >= 3);
        // healthy() then sees its blocks back in the pool and nothing in flight
      },
    },
  ];

  for (const row of rows) {
    test(row.name, { todo: row.todo }, async () => {
      const r = await row.send();
      if (row.expect) assertError(r, row.expect);
      if (row.anthropic) assertAnthropicError(r, row.anthropic);
      await h.healthy();
    });
  }

  test('no connection or descriptor leaked over the whole table', async () => {
    await h.fdsBackTo(fdsBefore);
    await h.healthy();
  });
});

describe('a slow-loris client under a 1.5 s read timeout', () => {
  let h;
  before(async () => {
    h = await harness(['--read-timeout-ms', '1500']);
  });
  after(async () => h && (await h.server.stop()));

  test('is answered 408 or closed, and other clients are served meanwhile', async () => {
    await h.healthy();
    const fdsBefore = fdCount(h.pid);
    // Far longer than 1.5 s at a byte per 200 ms: the server must cut it.
    const request = head(h, 'POST', COMPLETIONS, ['Content-Type: application/json', `X-Pad: ${'p'.repeat(400)}`]);
    let served = null;
    const loris = h.raw(async (socket, state) => {
      for (let i = 0; i < request.length; ++i) {
        if (!(await writeSome(socket, state, request[i]))) return;
        if (i === 2) served = h.servesNormally();  // another client, while this one dawdles
        await sleep(200);
      }
    }, { guardMs: 60000 });
    const x = await loris;
    assert.equal(x.timedOut, false, 'the server cut the slow client');
    if (x.response) {
      assertError(x.response, { status: 408, code: 'request_timeout' });
      assert.equal(x.response.headers.connection, 'close');
    } else {
      assert.equal(x.bytes.length, 0, 'closed without a partial answer');
    }
    assert.ok(served, 'the other client was started while the slow one was connected');
    await served;
    await h.healthy();
    await h.fdsBackTo(fdsBefore);
  });

  test('a body shorter than its Content-Length is answered 408', async () => {
    const body = JSON.stringify(completion());
    const x = await h.raw((socket) => socket.write(
      head(h, 'POST', COMPLETIONS, ['Content-Type: application/json', `Content-Length: ${body.length + 10}`]) + body),
    { guardMs: 60000 });
    assert.equal(x.timedOut, false, 'the server cut the request');
    assertError(x.response, { status: 408, code: 'request_timeout' });
    assert.equal(x.response.headers.connection, 'close');
    await h.healthy();
  });

  test('a slow TLS handshake is closed', async () => {
    // A handshake record header, then nothing more: the server closes it.
    const x = await h.raw((socket) => socket.write(Buffer.from([0x16, 0x03, 0x01])), { tls: false, guardMs: 60000 });
    assertClosedSilently(x);
    await h.healthy();
  });
});

describe('connections held without a key, from one address', () => {
  let h;
  before(async () => {
    h = await harness(['--max-connections-per-address', '16', '--unauthenticated-idle-ms', '1000']);
  });
  after(async () => h && (await h.server.stop()));

  // 48 keep-alive TLS connections from 127.0.0.2, each asking GET /health
  // (no key needed) and then holding on: at most 16 are served, the rest
  // answered 503; a tenant on 127.0.0.1 is served meanwhile; and the server
  // itself closes the held ones once they have waited the short idle.
  test('take at most their share, and are closed after the short idle', async () => {
    await h.healthy();
    const held = await Promise.all(Array.from({ length: 48 }, () => new Promise((resolve, reject) => {
      const socket = tls.connect({ host: h.host, port: h.port, ca: h.ca, localAddress: '127.0.0.2',
        servername: 'localhost' });
      let data = '';
      const state = { status: null, closed: false };
      socket.on('data', (d) => {
        data += d;
        const m = data.match(/^HTTP\/1\.1 (\d+)/);
        if (m && state.status === null) {
          state.status = Number(m[1]);
          resolve({ socket, state });
        }
      });
      socket.on('close', () => {
        state.closed = true;
        if (state.status === null) resolve({ socket, state });
      });
      socket.on('error', () => {});
      socket.on('secureConnect', () => socket.write('GET /health HTTP/1.1\r\nHost: x\r\n\r\n'));
      setTimeout(() => reject(new Error('no answer')), 20000).unref();
    })));
    const statuses = held.map((c) => c.state.status);
    const served = statuses.filter((s) => s === 200).length;
    assert.ok(served <= 16 && served > 0, `served ${served}: ${statuses}`);
    assert.equal(statuses.filter((s) => s === 503).length, 48 - served, `${statuses}`);
    await h.servesNormally();
    // The held connections showed no key: the server closes them after 1 s idle.
    for (let waited = 0; waited < 10000 && held.some((c) => !c.state.closed); waited += 100) await sleep(100);
    assert.equal(held.filter((c) => !c.state.closed).length, 0);
    for (const c of held) c.socket.destroy();
  });

  test('a body without a key is held to 64 KiB', async () => {
    const r = await h.post('/v1/completions', JSON.stringify({ model, prompt: 'x'.repeat(100 * 1024) }),
      { 'content-type': 'application/json' });
    assert.equal(r.status, 413, r.body);
    const keyed = await h.post('/v1/completions', JSON.stringify({ model, prompt: 'x'.repeat(100 * 1024),
      max_tokens: 1 }));
    assert.notEqual(keyed.status, 413, keyed.body);  // with a key, the 4 MiB limit
  });
});

describe('1,000 requests in a burst past the engine queue bound', () => {
  let h;
  let unlimitedKey;
  before(async () => {
    h = await harness(['--max-running', '2', '--max-waiting', '2', '--max-output-tokens', '64']);
  });
  after(async () => h && (await h.server.stop()));

  test('max_tokens over --max-output-tokens is a 400 naming max_tokens', async () => {
    const r = await h.post(COMPLETIONS, completion({ max_tokens: 65 }));
    assertError(r, { status: 400, code: 'invalid_value', param: 'max_tokens', message: /64/ });
    await h.healthy();
  });

  // Fires 1,000 small completions at once over 64 keep-alive connections
  // and checks every answer: 200, or a documented refusal with its headers.
  async function burst(apiKey, allowed) {
    const headers = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' };
    const agent = new https.Agent({ ca: h.ca, keepAlive: true, maxSockets: 64 });
    const body = JSON.stringify(completion({ max_tokens: 2, temperature: 0 }));
    const results = await Promise.all(Array.from({ length: 1000 }, () =>
      httpsRequest(h.server.baseUrl, h.ca, 'POST', COMPLETIONS, { headers, body, agent })));
    agent.destroy();
    const byStatus = {};
    for (const r of results) byStatus[r.status] = (byStatus[r.status] ?? 0) + 1;
    for (const r of results) {
      assert.ok(allowed.includes(r.status), `status ${r.status} (expected one of ${allowed}): ${r.body}; all: ${JSON.stringify(byStatus)}`);
      if (r.status === 200) {
        assert.equal(r.json.object, 'text_completion');
        assert.ok(r.json.usage.completion_tokens >= 1 && r.json.usage.completion_tokens <= 2);
      } else if (r.status === 503) {
        // the engine is full: model.max_running + model.max_waiting in flight
        assertError(r, { status: 503, type: 'server_error', code: 'overloaded' });
        assert.ok(Number(r.headers['retry-after']) >= 1, 'retry-after on a 503');
      } else if (r.status === 429) {
        // a tenant quota (the demo tenant's 600 a minute, 64 at once)
        assertError(r, { status: 429, type: 'rate_limit_error', code: 'rate_limit_exceeded' });
        assert.ok(Number(r.headers['retry-after']) >= 1, 'retry-after on a 429');
        assert.ok(r.headers['x-ratelimit-limit-requests'], 'x-ratelimit-* on a 429');
      }
    }
    assert.ok(byStatus[503] >= 1, `the queue bound refused some: ${JSON.stringify(byStatus)}`);
    assert.ok(byStatus[200] >= 1, `and served some: ${JSON.stringify(byStatus)}`);
    return byStatus;
  }

  test('a tenant with no quotas: each is served or refused 503 with retry-after; then all is back', async () => {
    // Only the engine's bound can refuse this tenant.
    const t = await h.admin('POST', '/admin/tenants', {
      id: 'burst', plan_id: 'demo',
      quotas: { requests_per_minute: 0, tokens_per_minute: 0, max_concurrent_requests: 0 },
    });
    assert.equal(t.status, 201, t.body);
    const key = await h.admin('POST', '/admin/tenants/burst/keys', { label: 'e2e' });
    assert.equal(key.status, 201, key.body);
    unlimitedKey = key.json.api_key;
    await h.healthy();
    const fdsBefore = fdCount(h.pid);

    const byStatus = await burst(unlimitedKey, [200, 503]);
    console.log('burst, a tenant with no quotas:', JSON.stringify(byStatus));

    // Every refusal gave its slot back: all is idle, served, billed.
    await h.idleCache();
    await h.fdsBackTo(fdsBefore);
    await h.healthy();
    const usage = await httpsRequest(h.server.baseUrl, h.ca, 'GET', '/v1/usage', {
      headers: { authorization: `Bearer ${unlimitedKey}` } });
    assert.equal(usage.status, 200, usage.body);
    assert.equal(usage.json.requests, byStatus[200], 'only the served requests are billed');
  });

  test('the demo tenant: served, 503 or 429 with their headers; then all is back', async () => {
    const fdsBefore = fdCount(h.pid);
    const byStatus = await burst(h.server.apiKey, [200, 503, 429]);
    console.log('burst, the demo tenant:', JSON.stringify(byStatus));
    await h.idleCache();
    await h.fdsBackTo(fdsBefore);
    // The demo tenant may be out of its minute's requests now: another
    // tenant's client is served.
    await h.servesNormally(unlimitedKey);
    await h.idleCache();
  });
});
