// A cluster on loopback for the end-to-end test of `kvgate route`: one
// redis-server of the test's own, `kvgate serve` replicas sharing it (each
// publishing its block events and refusing tenants: only a holder of the
// internal token gets in), and `kvgate route` fronts over them. A Cluster
// remembers every process and directory it made; cleanup() kills them all
// and removes the directories, and a process exit (a crashed test) kills
// whatever is still running, so nothing is left behind.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import OpenAI from 'openai';
import { parseExposition } from './prom_text.mjs';
import { startKvgate } from './server.mjs';

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// `promise`, or `onTimeout()` once `ms` have passed first; the timer is
// cleared either way (a pending timer would keep the test process alive).
export async function within(promise, ms, onTimeout) {
  let timer;
  const late = new Promise((r) => (timer = setTimeout(() => r(onTimeout()), ms)));
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

// Polls `probe` (sync or async) until it returns a truthy value, which it
// resolves to; past `timeoutMs` it throws with `what` and the last value seen.
export async function waitFor(probe, { timeoutMs = 5000, intervalMs = 50, what = 'a condition' } = {}) {
  const deadline = Date.now() + timeoutMs;
  let last;
  for (;;) {
    last = await probe();
    if (last) return last;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what} (last: ${JSON.stringify(last)})`);
    await sleep(intervalMs);
  }
}

// A port no one listens on now: bound on loopback by the kernel's choice, then released.
export function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

// One RESP command to a Redis on loopback (after AUTH, with a password);
// resolves to the reply's first line (`+PONG`, `:42`, ...), or for a bulk
// string (`$N`) to its N bytes as a Buffer. Enough for PING, DBSIZE, KEYS'
// count and GET.
export function redisCommand(port, args, { password } = {}) {
  const resp = (a) => `*${a.length}\r\n` + a.map((x) => `$${Buffer.byteLength(x)}\r\n${x}\r\n`).join('');
  return new Promise((resolve, reject) => {
    const s = net.connect(port, '127.0.0.1');
    let data = Buffer.alloc(0);
    let skip = password ? 1 : 0;  // AUTH's +OK
    s.setTimeout(2000, () => s.destroy(new Error('redis did not answer')));
    s.on('error', reject);
    s.on('connect', () => s.write((password ? resp(['AUTH', password]) : '') + resp(args)));
    s.on('data', (d) => {
      data = Buffer.concat([data, d]);
      for (;;) {
        const end = data.indexOf('\r\n');
        if (end < 0) return;
        const line = data.subarray(0, end).toString();
        if (skip > 0) {
          if (line.startsWith('-')) return s.destroy(new Error(`redis AUTH: ${line}`));
          --skip;
          data = data.subarray(end + 2);
          continue;
        }
        if (line.startsWith('$') && Number(line.slice(1)) >= 0) {
          const n = Number(line.slice(1));
          if (data.length < end + 2 + n) return;
          s.end();
          return resolve(Buffer.from(data.subarray(end + 2, end + 2 + n)));
        }
        s.end();
        return resolve(line);
      }
    });
  });
}

// Every child process any cluster started, killed if the test process exits with them alive.
const live = new Set();
process.once('exit', () => {
  for (const c of live) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
});
function track(child) {
  live.add(child);
  child.once('exit', () => live.delete(child));
}

export class Cluster {
  constructor() {
    this.dir = mkdtempSync(path.join(tmpdir(), 'kvgate-e2e-cluster-'));
    this.processes = [];  // {kill9(), dataDir} of every kvgate started, replicas and fronts
    this.redis = null;
    this.tokenFile = null;
    this.replicaCount = 0;
    this.frontCount = 0;
  }

  // redis-server on a free loopback port, no persistence, in its own
  // directory; resolves once it answers PING.
  async startRedis() {
    const port = await freePort();
    const dir = mkdtempSync(path.join(this.dir, 'redis-'));
    // A password every connection must send (AUTH), as a Redis the replicas
    // share should have; and the cluster key its records are sealed under.
    const password = randomBytes(24).toString('hex');
    this.redisPasswordFile = path.join(this.dir, 'redis-password');
    writeFileSync(this.redisPasswordFile, password + '\n', { mode: 0o600 });
    this.redisKeyFile = path.join(this.dir, 'redis-keys');
    writeFileSync(this.redisKeyFile, `names ${randomBytes(32).toString('hex')}\nkey 1 ${randomBytes(32).toString('hex')}\n`,
      { mode: 0o600 });
    const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '',
      '--appendonly', 'no', '--dir', dir, '--logfile', 'redis.log', '--requirepass', password], { stdio: 'ignore' });
    track(child);
    const exited = new Promise((r) => child.once('exit', (code, signal) => r(code ?? signal)));
    this.redis = {
      port,
      address: `127.0.0.1:${port}`,
      child,
      command: (...args) => redisCommand(port, args, { password }),
      async dbsize() {
        return Number((await redisCommand(port, ['DBSIZE'], { password })).slice(1));
      },
      async stop() {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
        await exited;
      },
    };
    let failed = null;
    child.once('error', (e) => (failed = e));
    await waitFor(async () => {
      if (failed) throw new Error(`redis-server: ${failed.message}`);
      if (child.exitCode !== null) throw new Error(`redis-server exited with ${child.exitCode} (see ${dir}/redis.log)`);
      return (await redisCommand(port, ['PING'], { password }).catch(() => '')) === '+PONG';
    }, { timeoutMs: 10000, what: 'redis-server to answer PING' });
    return this.redis;
  }

  // The token the front and the replicas share: 64 hex characters in a file only its owner reads.
  internalTokenFile() {
    if (!this.tokenFile) {
      this.tokenFile = path.join(this.dir, 'internal-token');
      writeFileSync(this.tokenFile, randomBytes(32).toString('hex') + '\n', { mode: 0o600 });
    }
    return this.tokenFile;
  }

  async #start(subcommand, args, name) {
    const dataDir = mkdtempSync(path.join(this.dir, `${name}-`));
    // Several engines share the machine's cores: one OpenMP thread each, which
    // sleeps when idle, or each waits on the others' spinning threads.
    const env = { OMP_NUM_THREADS: '1', OMP_WAIT_POLICY: 'passive' };
    const s = await startKvgate(subcommand, args, { dataDir, name, onSpawn: track, env });
    s.name = name;
    this.processes.push(s);
    return s;
  }

  // `kvgate serve` as a replica: events on a port of its own, the shared
  // Redis (when started), the internal token. `blockSize`: --block-size.
  async startReplica({ blockSize, extraArgs = [] } = {}) {
    const name = `replica${this.replicaCount++}`;
    const args = ['--kv-budget', '64MiB', '--block-events', 'tcp://127.0.0.1:0',
      '--internal-token-file', this.internalTokenFile()];
    if (this.redis) {
      args.push('--kv-redis', this.redis.address, '--kv-redis-key-file', this.redisKeyFile,
        '--kv-redis-password-file', this.redisPasswordFile);
    }
    if (blockSize) args.push('--block-size', String(blockSize));
    const r = await this.#start('serve', [...args, ...extraArgs], name);
    r.url = r.baseUrl;
    return r;
  }

  // `kvgate route` over `replicas` (what startReplica returned), trusting
  // their self-signed certificates (one PEM bundle).
  async startFront(replicas, { router = 'cache_aware', healthIntervalMs = 200, extraArgs = [] } = {}) {
    const name = `front${this.frontCount++}`;
    const bundle = path.join(this.dir, `${name}-replica-ca.pem`);
    writeFileSync(bundle, replicas.map((r) => readFileSync(r.certFile, 'utf8').trimEnd() + '\n').join(''));
    const args = ['--internal-token-file', this.internalTokenFile(), '--replica-ca', bundle, '--router', router,
      '--health-interval-ms', String(healthIntervalMs)];
    for (const r of replicas) args.push('--replica', r.url);
    const f = await this.#start('route', [...args, ...extraArgs], name);
    f.router = router;
    return f;
  }

  // Kills every process (SIGKILL: a test that failed may have left one
  // stuck) and removes every directory.
  async cleanup() {
    await Promise.all(this.processes.map((p) => p.kill9().catch(() => {})));
    if (this.redis) await this.redis.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

// An openai client for `server` (a front or a replica) with `apiKey`.
export function clientFor(server, apiKey = server.apiKey) {
  return new OpenAI({ apiKey, baseURL: server.baseUrl + '/v1', httpAgent: server.agent, maxRetries: 0 });
}

// An admin request with the server's admin token; the body parsed when it is JSON.
export async function admin(server, method, route, body) {
  const r = await server.request(method, route, {
    headers: { authorization: `Bearer ${server.adminToken}`, 'content-type': 'application/json' },
    body,
  });
  let json = null;
  try {
    json = r.body ? JSON.parse(r.body) : null;
  } catch {
    // not JSON: the caller looks at r.body
  }
  return { status: r.status, json, body: r.body, headers: r.headers };
}

// A tenant made through the server's admin API (plan demo) and one API key of it.
export async function newTenant(server, id, quotas = {}) {
  const t = await admin(server, 'POST', '/admin/tenants', { id, plan_id: 'demo', quotas });
  assert.equal(t.status, 201, t.body);
  const key = await admin(server, 'POST', `/admin/tenants/${id}/keys`, { label: 'e2e' });
  assert.equal(key.status, 201, key.body);
  return key.json.api_key;
}

// The server's /metrics (behind its admin token), parsed.
export async function scrape(server) {
  const r = await server.request('GET', '/metrics', { headers: { authorization: `Bearer ${server.adminToken}` } });
  assert.equal(r.status, 200, r.body);
  return parseExposition(r.body);
}

// One sample's value by name and labels (every label given must match); undefined when absent.
export function value(exposition, name, labels = {}) {
  const s = exposition.samples.find(
    (x) => x.name === name && Object.entries(labels).every(([k, v]) => x.labels[k] === v));
  return s?.value;
}
