// Starts the real `kvgate serve` on loopback for an end-to-end test and
// reads what it prints at start-up: the port it bound, the demo tenant's
// API key and the admin token (shown once, at first start), and the path of
// its self-signed certificate, which the clients then trust explicitly.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import https from 'node:https';
import { tmpdir } from 'node:os';
import path from 'node:path';
import readline from 'node:readline';

const binary = process.env.KVGATE_BINARY;
const shared = process.env.KVGATE_SHARED;

// `dataDir`: restart on an existing data directory (a restarted server prints
// no secrets: the caller keeps them from the first start); it is then left
// for the caller to remove.
export async function startServer(extraArgs = [], { dataDir: reuse, model } = {}) {
  if (!binary) throw new Error('KVGATE_BINARY is not set');
  const dataDir = reuse ?? mkdtempSync(path.join(tmpdir(), 'kvgate-e2e-'));
  // A small KV pool: the sanitizer build checks the pool's invariants after every change.
  const budget = extraArgs.includes('--kv-budget') ? [] : ['--kv-budget', '64MiB'];
  const args = ['serve', '--data-dir', dataDir, '--listen', '127.0.0.1:0', ...budget, ...extraArgs];
  if (model) args.push('--model', model);
  else if (shared) args.push('--model', path.join(shared, 'models/stories260K.gguf'));
  const child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const lines = [];
  child.stderr.on('data', (d) => process.stderr.write(d));
  const info = await new Promise((resolve, reject) => {
    const found = {};
    const rl = readline.createInterface({ input: child.stdout });
    const timer = setTimeout(() => reject(new Error('kvgate did not start:\n' + lines.join('\n'))), 60000);
    child.on('exit', (code) => reject(new Error(`kvgate exited with ${code}:\n` + lines.join('\n'))));
    rl.on('line', (line) => {
      lines.push(line);
      let m;
      if ((m = line.match(/API key \(shown once\): (kvg-\S+)/))) found.apiKey = m[1];
      if ((m = line.match(/admin token \(shown once\): (kvga-\S+)/))) found.adminToken = m[1];
      if ((m = line.match(/TLS certificate (\S+)/))) found.certFile = m[1];
      if ((m = line.match(/listening on (https:\/\/127\.0\.0\.1:\d+)/))) {
        found.baseUrl = m[1];
        clearTimeout(timer);
        resolve(found);
      }
    });
  });
  const ca = readFileSync(info.certFile);
  const agent = new https.Agent({ ca, keepAlive: true });
  return {
    ...info,
    dataDir,
    agent,
    lines,
    // SIGTERM, as a supervisor stops it; resolves to its exit code once it
    // has finished what was in flight and written the ledger.
    async stop() {
      agent.destroy();
      const exited = new Promise((r) => child.once('exit', (code) => r(code)));
      child.kill('SIGTERM');
      const code = await exited;
      if (!reuse) rmSync(dataDir, { recursive: true, force: true });
      return code;
    },
    // SIGKILL: nothing is flushed or closed; the data directory stays.
    async kill9() {
      agent.destroy();
      const exited = new Promise((r) => child.once('exit', (code, signal) => r(signal)));
      child.kill('SIGKILL');
      return exited;
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
