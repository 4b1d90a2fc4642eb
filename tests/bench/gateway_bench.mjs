// The node half of `ops/bench gateway` (tests/bench/gateway_bench.sh starts
// and stops the servers; this is the client for what wrk cannot do):
//
//   node gateway_bench.mjs idle URL CERT COUNT HOLD_S PID...
//     opens COUNT TLS connections to URL and holds them idle HOLD_S seconds;
//     prints one JSON line: the summed VmRSS of the PIDs before and after,
//     how many handshakes succeeded, how many were still open at the end, and
//     how many then answered a GET /health (proof the server kept them).
//   node gateway_bench.mjs tenants URL CERT ADMIN_TOKEN MODEL
//     the multi-tenant shared-prefix workload: 4 tenants made through the
//     admin API x 2 system prompts of 1,024 token ids, 64 fresh ids per
//     request, 48 streamed requests at concurrency 4, 16 output tokens;
//     prints one JSON line: requests/s, TTFT (first chunk with a choice, as
//     the client sees it), cached tokens over prompt tokens from the usage
//     chunks, and any error statuses.
import { readFileSync } from 'node:fs';
import https from 'node:https';
import tls from 'node:tls';

const [mode, ...args] = process.argv.slice(2);

function rssKb(pids) {
  let sum = 0;
  for (const pid of pids) {
    const m = readFileSync(`/proc/${pid}/status`, 'utf8').match(/VmRSS:\s+(\d+) kB/);
    if (m) sum += Number(m[1]);
  }
  return sum;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function idle(url, certFile, count, holdS, pids) {
  const u = new URL(url);
  const ca = readFileSync(certFile);
  // One request first, so the server's lazily made state is not counted.
  await new Promise((resolve, reject) => {
    https.get(url + '/health', { ca }, (res) => { res.resume(); res.on('end', resolve); }).on('error', reject);
  });
  await sleep(500);
  const before = rssKb(pids);
  const socks = [];
  let failed = 0;
  let closed = 0;
  const connectOne = () => new Promise((resolve) => {
    const s = tls.connect({ host: u.hostname, port: Number(u.port), ca, servername: 'localhost' }, () => resolve(s));
    s.on('error', () => { failed++; resolve(null); });
    s.on('close', () => { s.kvgClosed = true; closed++; });
  });
  const t0 = performance.now();
  for (let i = 0; i < count; i += 100) {  // batches of 100 handshakes
    const batch = [];
    for (let j = i; j < Math.min(count, i + 100); j++) batch.push(connectOne());
    for (const s of await Promise.all(batch)) if (s) socks.push(s);
  }
  const connectMs = performance.now() - t0;
  await sleep(holdS * 1000);
  const after = rssKb(pids);
  const open = socks.filter((s) => !s.kvgClosed).length;
  // Each connection still works: one GET /health on every one.
  let answered = 0;
  await Promise.all(socks.filter((s) => !s.kvgClosed).map((s) => new Promise((resolve) => {
    let buf = '';
    const timer = setTimeout(resolve, 10000);
    s.on('data', (d) => {
      buf += d;
      if (/^HTTP\/1\.1 200/.test(buf) && buf.includes('\r\n\r\n')) { answered++; clearTimeout(timer); resolve(); }
    });
    s.write('GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n');
  })));
  for (const s of socks) s.destroy();
  console.log(JSON.stringify({ count, opened: socks.length, failed, open_after_hold: open, closed_early: count - failed - open,
    answered_after_hold: answered, rss_before_kb: before, rss_after_kb: after, connect_ms: Math.round(connectMs) }));
}

// Deterministic token ids: a 64-bit LCG, ids in [3, 32000) (0-2 are the
// llama-spm vocabulary's unk, BOS and EOS).
function ids(seed, n) {
  let x = BigInt(seed) * 0x9E3779B97F4A7C15n + 1n;
  const out = [];
  for (let i = 0; i < n; i++) {
    x = (x * 6364136223846793005n + 1442695040888963407n) & 0xFFFFFFFFFFFFFFFFn;
    out.push(3 + Number((x >> 33n) % 31997n));
  }
  return out;
}

function post(agent, url, path, headers, body) {
  return new Promise((resolve, reject) => {
    const req = https.request(url + path, { method: 'POST', agent, headers: { 'Content-Type': 'application/json', ...headers } }, (res) => {
      let data = '';
      res.on('data', (c) => (data += c));
      res.on('end', () => resolve({ status: res.statusCode, body: data }));
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

const pct = (sorted, p) => sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] : NaN;

async function tenants(url, certFile, adminToken, model) {
  const TENANTS = 4, SYSTEMS = 2, SYSTEM_TOKENS = 1024, SUFFIX_TOKENS = 64, REQUESTS = 48, CONCURRENCY = 4, OUTPUT = 16;
  const agent = new https.Agent({ ca: readFileSync(certFile), keepAlive: true, maxSockets: CONCURRENCY + 1 });
  const admin = { Authorization: `Bearer ${adminToken}` };
  const keys = [];
  for (let t = 0; t < TENANTS; t++) {
    const id = `bench-t${t}`;
    let r = await post(agent, url, '/admin/tenants', admin, { id, plan_id: 'demo', quotas: {} });
    if (r.status !== 201) throw new Error(`POST /admin/tenants ${id}: ${r.status} ${r.body}`);
    r = await post(agent, url, `/admin/tenants/${id}/keys`, admin, { label: 'bench' });
    if (r.status !== 201) throw new Error(`POST /admin/tenants/${id}/keys: ${r.status} ${r.body}`);
    keys.push(JSON.parse(r.body).api_key);
  }
  // The same two system prompts for every tenant: each tenant's cache scope is
  // its own, so the ideal is 8 misses of 1,024 tokens, not 2.
  const systems = [];
  for (let s = 0; s < SYSTEMS; s++) systems.push([1, ...ids(1000 + s, SYSTEM_TOKENS - 1)]);
  // Request i: pair i % 8 (tenant = pair % 4, system = pair / 4), so the first
  // 8 requests are the 8 cold prefixes and every later one can hit.
  const jobs = [];
  for (let i = 0; i < REQUESTS; i++) {
    const pair = i % (TENANTS * SYSTEMS);
    jobs.push({ i, key: keys[pair % TENANTS], prompt: [...systems[Math.floor(pair / TENANTS)], ...ids(100000 + i, SUFFIX_TOKENS)] });
  }
  const results = [];
  const statuses = {};
  const one = (job) => new Promise((resolve) => {
    const body = JSON.stringify({ model, prompt: job.prompt, max_tokens: OUTPUT, temperature: 0, ignore_eos: true,
      stream: true, stream_options: { include_usage: true } });
    const t0 = performance.now();
    const req = https.request(url + '/v1/completions', { method: 'POST', agent,
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${job.key}` } }, (res) => {
      statuses[res.statusCode] = (statuses[res.statusCode] || 0) + 1;
      let buf = '', ttft = null, usage = null, chunks = 0, errorFrame = null;
      res.setEncoding('utf8');
      res.on('data', (d) => {
        buf += d;
        let k;
        while ((k = buf.indexOf('\n\n')) >= 0) {
          const frame = buf.slice(0, k);
          buf = buf.slice(k + 2);
          if (!frame.startsWith('data: ') || frame === 'data: [DONE]') continue;
          const msg = JSON.parse(frame.slice(6));
          if (msg.error) errorFrame = msg.error;
          if (msg.choices && msg.choices.length) {
            chunks++;
            if (ttft === null) ttft = performance.now() - t0;
          }
          if (msg.usage) usage = msg.usage;
        }
      });
      res.on('end', () => {
        results.push({ i: job.i, status: res.statusCode, ttft, usage, chunks, errorFrame, ms: performance.now() - t0,
          body: res.statusCode === 200 ? undefined : buf.slice(0, 300) });
        resolve();
      });
    });
    req.on('error', (e) => { statuses[e.code || 'error'] = (statuses[e.code || 'error'] || 0) + 1; results.push({ i: job.i, error: String(e) }); resolve(); });
    req.end(body);
  });
  let next = 0;
  const t0 = performance.now();
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => { while (next < jobs.length) await one(jobs[next++]); }));
  const wall = (performance.now() - t0) / 1000;
  agent.destroy();
  const ok = results.filter((r) => r.status === 200 && r.usage && !r.errorFrame);
  const ttfts = ok.map((r) => r.ttft).filter((x) => x !== null).sort((a, b) => a - b);
  const prompt = ok.reduce((s, r) => s + r.usage.prompt_tokens, 0);
  const cached = ok.reduce((s, r) => s + (r.usage.prompt_tokens_details?.cached_tokens ?? 0), 0);
  const completion = ok.reduce((s, r) => s + r.usage.completion_tokens, 0);
  const coldTtft = ok.filter((r) => r.i < TENANTS * SYSTEMS).map((r) => r.ttft);
  const warmTtft = ok.filter((r) => r.i >= TENANTS * SYSTEMS).map((r) => r.ttft).sort((a, b) => a - b);
  const bad = results.filter((r) => !(r.status === 200 && r.usage && !r.errorFrame)).slice(0, 3);
  console.log(JSON.stringify({ requests: REQUESTS, ok: ok.length, statuses, wall_s: wall, rps: ok.length / wall,
    out_tok_s: completion / wall, completion_tokens: completion,
    ttft_p50: pct(ttfts, 50), ttft_p90: pct(ttfts, 90), ttft_mean: ttfts.reduce((s, x) => s + x, 0) / ttfts.length,
    ttft_first8_mean: coldTtft.reduce((s, x) => s + x, 0) / coldTtft.length, ttft_rest_p50: pct(warmTtft, 50),
    prompt_tokens: prompt, cached_tokens: cached, cached_share: prompt ? cached / prompt : 0,
    ideal_share: ((REQUESTS - TENANTS * SYSTEMS) * SYSTEM_TOKENS) / (REQUESTS * (SYSTEM_TOKENS + SUFFIX_TOKENS)),
    bad }));
}

if (mode === 'idle') {
  const [url, cert, count, hold, ...pids] = args;
  await idle(url, cert, Number(count), Number(hold), pids);
} else if (mode === 'tenants') {
  const [url, cert, adminToken, model] = args;
  await tenants(url, cert, adminToken, model);
} else {
  console.error('usage: gateway_bench.mjs idle URL CERT COUNT HOLD_S PID... | tenants URL CERT ADMIN_TOKEN MODEL');
  process.exit(2);
}
