// Starts the real `kvgate serve` (or another kvgate subcommand that serves,
// such as `kvgate route`) on loopback for an end-to-end test and reads what
// it prints at start-up: the port it bound, the demo tenant's API key and
// the admin token (shown once, at first start), the path of its self-signed
// certificate, which the clients then trust explicitly, and the endpoint it
// publishes block events on (with --block-events).
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import https from 'node:https';
import { tmpdir } from 'node:os';
import path from 'node:path';
import readline from 'node:readline';

const binary = process.env.KVGATE_BINARY;
const shared = process.env.KVGATE_SHARED;

// The model every test serves unless it names another: stories260K from the shared dir.
export function defaultModel() {
  return shared ? path.join(shared, 'models/stories260K.gguf') : undefined;
}

// `kvgate <subcommand> --data-dir D --listen 127.0.0.1:0 [--model M] ...args`.
// `dataDir`: restart on an existing data directory (a restarted server
// prints no secrets: the caller keeps them from the first start); it is then
// left for the caller to remove. `model`: the GGUF file (default
// stories260K; null: no --model flag). `name`: a prefix for its stderr
// lines, when several run at once. `onSpawn(child)`: told of the process as
// soon as it exists, so a caller can kill it even if the start fails.
// `env`: variables added to the process's environment.
export async function startKvgate(subcommand, extraArgs = [], { dataDir: reuse, model, name, onSpawn, env } = {}) {
  if (!binary) throw new Error('KVGATE_BINARY is not set');
  const dataDir = reuse ?? mkdtempSync(path.join(tmpdir(), `kvgate-e2e-${subcommand}-`));
  const args = [subcommand, '--data-dir', dataDir, '--listen', '127.0.0.1:0', ...extraArgs];
  const modelFile = model === undefined ? defaultModel() : model;
  if (modelFile) args.push('--model', modelFile);
  const child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  onSpawn?.(child);
  const lines = [];
  const errLines = [];
  if (name) {
    readline.createInterface({ input: child.stderr }).on('line', (l) => {
      errLines.push(l);
      process.stderr.write(`[${name}] ${l}\n`);
    });
  } else {
    child.stderr.on('data', (d) => {
      errLines.push(String(d));
      process.stderr.write(d);
    });
  }
  const exited = new Promise((r) => child.once('exit', (code, signal) => r({ code, signal })));
  const info = await new Promise((resolve, reject) => {
    const found = {};
    const rl = readline.createInterface({ input: child.stdout });
    const why = () => `\n$ kvgate ${args.join(' ')}\n` + lines.join('\n') + '\n' + errLines.join('\n');
    const timer = setTimeout(() => reject(new Error(`kvgate ${subcommand} did not start:` + why())), 60000);
    // Not yet started when it exits: wait for the last of its output before saying why.
    // (The start timer goes with it: a pending one would hold the test process for a minute.)
    exited.then(({ code, signal }) => {
      clearTimeout(timer);
      setTimeout(() => reject(new Error(`kvgate ${subcommand} exited with ${code ?? signal}:` + why())), 50);
    });
    rl.on('line', (line) => {
      lines.push(line);
      let m;
      if ((m = line.match(/API key \(shown once\): (kvg-\S+)/))) found.apiKey = m[1];
      if ((m = line.match(/admin token \(shown once\): (kvga-\S+)/))) found.adminToken = m[1];
      if ((m = line.match(/TLS certificate (\S+)/))) found.certFile = m[1];
      if ((m = line.match(/block events on (\S+)/))) found.blockEvents = m[1];
      if ((m = line.match(/listening on (https:\/\/127\.0\.0\.1:\d+)/))) {
        found.baseUrl = m[1];
        clearTimeout(timer);
        resolve(found);
      }
    });
  }).catch((e) => {
    child.kill('SIGKILL');
    if (!reuse) rmSync(dataDir, { recursive: true, force: true });
    throw e;
  });
  const ca = readFileSync(info.certFile);
  const agent = new https.Agent({ ca, keepAlive: true });
  const running = () => child.exitCode === null && child.signalCode === null;
  return {
    ...info,
    dataDir,
    agent,
    lines,
    pid: child.pid,
    running,
    exited,
    // SIGTERM, as a supervisor stops it; resolves to its exit code once it
    // has finished what was in flight and written the ledger.
    async stop() {
      agent.destroy();
      if (running()) child.kill('SIGTERM');
      const { code } = await exited;
      if (!reuse) rmSync(dataDir, { recursive: true, force: true });
      return code;
    },
    // SIGKILL: nothing is flushed or closed; the data directory stays.
    // Resolves to the signal it died of (null when it had already exited).
    async kill9() {
      agent.destroy();
      if (running()) child.kill('SIGKILL');
      return (await exited).signal;
    },
    // A raw HTTPS request, for the admin routes and error bodies.
    request(method, route, { headers = {}, body } = {}) {
      return new Promise((resolve, reject) => {
        const req = https.request(info.baseUrl + route, { method, headers, agent }, (res) => {
          let data = '';
          res.on('data', (c) => (data += c));
          res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: data }));
        });
        req.on('error', reject);
        if (body !== undefined) req.write(typeof body === 'string' ? body : JSON.stringify(body));
        req.end();
      });
    },
  };
}

// `kvgate serve` with a small KV pool (64 MiB unless extraArgs set
// --kv-budget): the sanitizer build checks the pool's invariants after every
// change. Options as startKvgate's.
export async function startServer(extraArgs = [], options = {}) {
  const budget = extraArgs.includes('--kv-budget') ? [] : ['--kv-budget', '64MiB'];
  return startKvgate('serve', [...budget, ...extraArgs], options);
}
