// docs/operations.md, run: the operator's recipes against the real
// binaries. The blocks the guide marks `<!-- e2e: NAME -->` are read from
// the guide and run by bash as written: the certificate (its first line,
// the name and address, set to localhost and 127.0.0.1) and the cluster
// on one machine (in network, mount and pid namespaces of its own, so that
// its fixed ports are free and every process it starts ends with it; from
// a scratch "checkout" whose build/release/gateway/kvgate and ../shared
// are links to the binary and the data under test). The single-server
// recipes, written for the systemd layout, are run as the same commands on
// a scratch data directory: the first start's secrets in a file, the
// access log, a backup taken while serving and restored, the demo tenant
// disabled, a lost admin token made anew. And the systemd unit: verified
// by systemd-analyze when it is installed, its ExecStart run.
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import {
  existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, statSync, unlinkSync, writeFileSync,
} from 'node:fs';
import https from 'node:https';
import { tmpdir } from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { defaultModel, startServer } from './server.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const guide = readFileSync(path.join(root, 'docs/operations.md'), 'utf8');
const binary = process.env.KVGATE_BINARY;
const ctlBinary = process.env.KVGATECTL_BINARY ??
  (binary && path.join(path.dirname(binary), '../ops/kvgatectl/kvgatectl'));

let scratch;
before(() => {
  assert.ok(binary, 'KVGATE_BINARY is set');
  scratch = mkdtempSync(path.join(tmpdir(), 'kvgate-e2e-operations-'));
});
after(() => {
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

// The body of the ```sh block the guide marks `<!-- e2e: name -->`.
function recipe(name) {
  const m = guide.match(new RegExp(`<!-- e2e: ${name} -->\\n\`\`\`sh\\n([\\s\\S]*?)\\n\`\`\`\\n`));
  assert.ok(m, `docs/operations.md has no sh block marked <!-- e2e: ${name} -->`);
  return m[1];
}

// Runs a program; resolves to its exit status and output, never rejects.
// SIGKILL past the timeout: `unshare --fork` ignores SIGTERM while it waits.
function run(file, args, { cwd, env, timeout = 60000 } = {}) {
  return new Promise((resolve) => {
    execFile(file, args, { cwd, env: { ...process.env, ...env }, timeout, killSignal: 'SIGKILL', maxBuffer: 16 << 20 },
      (err, stdout, stderr) => resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr }));
  });
}
const bash = (script, opts) => run('bash', ['-c', script], opts);
const have = async (program) => (await bash(`command -v ${program}`)).code === 0;

function ctl(server, token, args) {
  return run(ctlBinary, args, {
    env: { KVGATE_SERVER: server.baseUrl, KVGATE_ADMIN_TOKEN: token, KVGATE_CACERT: server.certFile },
  });
}

// The secrets file as a shell reads it: `. FILE`, then the two variables.
async function sourced(file) {
  const s = await run('bash', ['-c', '. "$0" && printf "%s\\n%s" "$KVGATE_API_KEY" "$KVGATE_ADMIN_TOKEN"', file]);
  assert.equal(s.code, 0, s.stderr);
  const [apiKey, adminToken] = s.stdout.split('\n');
  return { apiKey, adminToken };
}

async function complete(server, apiKey, prompt, maxTokens = 4) {
  const r = await server.request('POST', '/v1/completions', {
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: { model: 'stories260K', prompt, max_tokens: maxTokens, temperature: 0 },
  });
  return { ...r, json: r.status === 200 ? JSON.parse(r.body) : null };
}

async function adminGet(server, token, route) {
  const r = await server.request('GET', route, { headers: { authorization: `Bearer ${token}` } });
  return { status: r.status, json: r.status === 200 ? JSON.parse(r.body) : null };
}

const linesOf = (file) => (existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : []);

// The access log's line, every field in its documented order.
const accessLine = new RegExp('^time=\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z request_id=(\\S+) tenant=(\\S+) ' +
  'key=(\\S+) status=(\\d{3}) finish=(\\S+) prompt_tokens=(\\d+) cached_tokens=(\\d+) completion_tokens=(\\d+) ' +
  'cost_micros=(\\d+) latency_ms=\\d+\\.\\d{3} ttft_ms=(?:\\d+\\.\\d{3}|-)$');

test('first-start secrets, access log, a backup restored, the demo tenant, a lost admin token', async () => {
  const dir = path.join(scratch, 'single');
  mkdirSync(dir);
  const dataDir = path.join(dir, 'lib');
  const secrets = path.join(dataDir, 'first-start-secrets');
  const accessLog = path.join(dir, 'access.log');
  // As the unit starts it: the secrets to a file in the data directory, an access log.
  const args = ['--print-secrets-to', secrets, '--access-log', accessLog];
  let server = await startServer(args, { dataDir });
  try {
    // Secrets at first start: in the 0600 file, shell, and nowhere on stdout.
    assert.equal(statSync(secrets).mode & 0o777, 0o600);
    const first = await sourced(secrets);
    assert.match(first.apiKey, /^kvg-/);
    assert.match(first.adminToken, /^kvga-[0-9a-f]{64}$/);
    assert.equal(server.apiKey, undefined);
    for (const l of server.lines) {
      assert.ok(!l.includes(first.apiKey) && !l.includes(first.adminToken), `a secret on stdout: ${l}`);
    }
    assert.ok(server.lines.some((l) => l.includes(`written to ${secrets} (mode 0600)`)), server.lines.join('\n'));
    assert.ok(server.lines.some((l) => l.startsWith(`kvgate: access log ${accessLog}`)), server.lines.join('\n'));

    // Access log: exactly one line for the request, its numbers, and no word of its text.
    const prompt = 'The zebra quietly painted marmalade';
    const done = await complete(server, first.apiKey, prompt);
    assert.equal(done.status, 200, done.body);
    let lines = linesOf(accessLog);
    assert.equal(lines.length, 1, lines.join('\n'));
    const m = lines[0].match(accessLine);
    assert.ok(m, lines[0]);
    const u = done.json.usage;
    assert.deepEqual(m.slice(1, 10), [done.headers['x-request-id'], 'demo', m[3], '200', 'length',
      String(u.prompt_tokens), String(u.prompt_tokens_details.cached_tokens), String(u.completion_tokens),
      String(u.kvgate.cost_micros)]);
    for (const word of ['zebra', 'marmalade', done.json.choices[0].text.trim()]) {
      assert.ok(!lines[0].includes(word), `'${word}' in the access log: ${lines[0]}`);
    }

    // Backup while serving: kvgatectl backup, then more work the backup must not have.
    assert.equal((await complete(server, first.apiKey, 'Once upon a time')).status, 200);
    const backup = path.join(dir, 'backups', 'tenancy-1');
    const b = await ctl(server, first.adminToken, ['backup', backup]);
    assert.equal(b.code, 0, b.stderr);
    assert.match(b.stdout, new RegExp(`^backed up the tenancy store to ${backup} on the server's machine \\(\\d+ files, \\d+ bytes, schema version 2\\)`));
    assert.equal((await ctl(server, first.adminToken, ['backup', backup])).code, 1, 'an existing directory is refused');
    assert.equal((await ctl(server, first.adminToken, ['backup', 'relative/dir'])).code, 2);
    assert.equal((await complete(server, first.apiKey, 'Once upon a time')).status, 200);
    const later = await ctl(server, first.adminToken, ['keys', 'create', 'demo', '--label', 'after-backup', '--json']);
    assert.equal(later.code, 0, later.stderr);
    const laterKey = JSON.parse(later.stdout).api_key;
    assert.equal((await complete(server, laterKey, 'Once')).status, 200);
    assert.equal((await adminGet(server, first.adminToken, '/admin/usage?tenant=demo')).json.requests, 4);
    assert.equal(await server.stop(), 0);

    // Restore, as the guide: move tenancy/ aside, copy the backup in its place, start.
    renameSync(path.join(dataDir, 'tenancy'), path.join(dataDir, 'tenancy.replaced'));
    const cp = await run('cp', ['-a', backup, path.join(dataDir, 'tenancy')]);
    assert.equal(cp.code, 0, cp.stderr);
    server = await startServer(args, { dataDir });
    assert.ok(!server.lines.some((l) => l.includes('made now, written to')), 'a restart makes no secret');
    const usage = await adminGet(server, first.adminToken, '/admin/usage?tenant=demo');
    assert.equal(usage.json.requests, 2, 'the ledger as of the backup');
    assert.equal((await complete(server, laterKey, 'Once')).status, 401, 'a key made after the backup');
    assert.equal((await complete(server, first.apiKey, 'Once')).status, 200);
    assert.equal(linesOf(accessLog).length, 5, 'appended across restarts');

    // The demo tenant disabled: its key refused at once; a 401 is no access-log line.
    const dis = await ctl(server, first.adminToken, ['tenants', 'disable', 'demo']);
    assert.equal(dis.code, 0, dis.stderr);
    assert.equal((await complete(server, first.apiKey, 'Once')).status, 401);
    assert.equal(linesOf(accessLog).length, 5);
    assert.equal(await server.stop(), 0);

    // A lost admin token. With the old secrets file still there the start
    // stops and makes nothing; moved away, the start makes a new token.
    unlinkSync(path.join(dataDir, 'admin-token'));
    await assert.rejects(startServer(args, { dataDir }), /exists: refusing to overwrite it/);
    assert.ok(!existsSync(path.join(dataDir, 'admin-token')), 'a refused start made no token');
    renameSync(secrets, path.join(dir, 'kvgate-first-start-secrets.old'));
    server = await startServer(args, { dataDir });
    const fresh = await sourced(secrets);
    assert.equal(fresh.apiKey, '', 'only the admin token is made anew');
    assert.match(fresh.adminToken, /^kvga-[0-9a-f]{64}$/);
    assert.notEqual(fresh.adminToken, first.adminToken);
    const tenants = await adminGet(server, fresh.adminToken, '/admin/tenants');
    assert.equal(tenants.status, 200);
    assert.deepEqual(tenants.json.data.map((t) => [t.id, t.status]), [['demo', 'suspended']], 'tenancy untouched');
    assert.equal((await adminGet(server, first.adminToken, '/admin/tenants')).status, 403, 'the old token');
  } finally {
    if (server.running()) await server.stop();
  }
});

test('the certificate recipe makes a chain the server serves and clients verify by name and address', async () => {
  const dir = path.join(scratch, 'cert');
  mkdirSync(dir);
  const script = recipe('certificate').replace(/^NAME=\S+ ADDR=\S+/, 'NAME=localhost ADDR=127.0.0.1');
  assert.notEqual(script, recipe('certificate'), 'the recipe starts with NAME=... ADDR=...');
  const r = await bash(script, { cwd: dir });
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /DNS:localhost, IP Address:127\.0\.0\.1/);
  const server = await startServer(['--tls-cert', path.join(dir, 'server.crt'), '--tls-key', path.join(dir, 'server.key')],
    { dataDir: path.join(dir, 'data') });
  try {
    assert.ok(server.lines.some((l) => l.startsWith(`kvgate: TLS certificate ${path.join(dir, 'server.crt')} (SHA-256 `)));
    const port = new URL(server.baseUrl).port;
    const ca = readFileSync(path.join(dir, 'ca.crt'));
    const get = (host, servername) => new Promise((resolve) => {
      https.get({ host, port, path: '/health', ca, servername, agent: false }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode));
      }).on('error', (e) => resolve(e.code));
    });
    assert.equal(await get('localhost'), 200);
    assert.equal(await get('127.0.0.1'), 200);
    assert.equal(await get('127.0.0.1', 'kvgate.example.com'), 'ERR_TLS_CERT_ALTNAME_INVALID', 'a name not in the SANs');
  } finally {
    await server.stop();
  }
});

test('ops/kvgate.service verifies and its ExecStart serves', async (t) => {
  const unit = readFileSync(path.join(root, 'ops/kvgate.service'), 'utf8');
  const dir = path.join(scratch, 'unit');
  mkdirSync(dir);
  // Its paths moved into the scratch directory, the binary the one under test.
  const moved = (text) => text.replaceAll('/usr/local/bin/kvgate', binary).replaceAll('/var/lib/kvgate', `${dir}/lib`)
    .replaceAll('/var/log/kvgate', `${dir}/log`).replaceAll('/etc/kvgate/kvgate.toml', `${dir}/kvgate.toml`);

  if (await have('systemd-analyze')) {
    writeFileSync(path.join(dir, 'kvgate.service'), unit.replaceAll('/usr/local/bin/kvgate', binary));
    const v = await run('systemd-analyze', ['verify', path.join(dir, 'kvgate.service')]);
    assert.equal(v.code, 0, v.stderr);
    assert.equal(v.stderr.trim(), '', v.stderr);
  } else {
    t.diagnostic('systemd-analyze is not installed: the unit was not verified, only its ExecStart run');
  }

  const execStart = unit.match(/^ExecStart=((?:.*\\\n)*.*)$/m)[1].replace(/\\\n\s*/g, '');
  const argv = moved(execStart).split(/\s+/).filter(Boolean);
  assert.equal(argv[0], binary);
  // The sample config, as the install copies it, with the model's absolute path and small sizes.
  const config = readFileSync(path.join(root, 'ops/kvgate.toml'), 'utf8')
    .replace(/^path = .*$/m, `path = ${JSON.stringify(defaultModel())}`)
    .replace(/^listen = "127\.0\.0\.1:8443"$/m, 'listen = "127.0.0.1:0"')
    .replace(/^kv_budget = .*$/m, 'kv_budget = "64MiB"').replace(/^host_bytes = .*$/m, 'host_bytes = 0')
    .replace(/^disk_bytes = .*$/m, 'disk_bytes = "64MiB"');
  writeFileSync(path.join(dir, 'kvgate.toml'), config);
  mkdirSync(path.join(dir, 'log'));  // systemd's LogsDirectory=
  const child = spawn(argv[0], argv.slice(1), { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise((r) => child.once('exit', (code) => r(code)));
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  try {
    const base = await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no listening line; stderr:\n${stderr}`)), 60000);
      exited.then((code) => reject(new Error(`exited ${code}:\n${stderr}`)));
      readline.createInterface({ input: child.stdout }).on('line', (l) => {
        const m = l.match(/listening on (https:\/\/127\.0\.0\.1:\d+)/);
        if (m) {
          clearTimeout(timer);
          resolve(m[1]);
        }
      });
    });
    const secrets = `${dir}/lib/first-start-secrets`;
    assert.equal(statSync(secrets).mode & 0o777, 0o600);
    const { apiKey } = await sourced(secrets);
    const c = await run('curl', ['-sf', '--cacert', `${dir}/lib/tls/self-signed.crt`, `${base}/v1/completions`,
      '-H', `Authorization: Bearer ${apiKey}`, '-H', 'Content-Type: application/json',
      '-d', '{"model":"stories260K","prompt":"Once upon a time","max_tokens":2}']);
    assert.equal(c.code, 0, c.stderr);
    assert.equal(linesOf(`${dir}/log/access.log`).length, 1);
  } finally {
    child.kill('SIGTERM');
  }
  assert.equal(await exited, 0, stderr);
});

test('the multi-replica recipe, as written', async (t) => {
  for (const p of ['redis-server', 'redis-cli', 'curl', 'openssl', 'unshare', 'ip']) {
    if (!(await have(p))) return t.skip(`${p} is not installed`);
  }
  // Namespaces of its own: a loopback where 6379 and 8440-8453 are free,
  // a /tmp of its own, and every process it starts killed when it ends.
  const ns = ['-rnmpf', '--kill-child', '--mount-proc'];
  const probe = await run('unshare', [...ns, 'bash', '-c', 'ip link set lo up && mount -t tmpfs tmpfs /tmp']);
  if (probe.code !== 0) return t.skip(`no user, network and pid namespaces here: ${probe.stderr.trim()}`);

  const shared = process.env.KVGATE_SHARED ?? path.join(root, '../shared');
  // A checkout's layout as the recipe reads it from $PWD, linked to what is under test.
  const setup = [
    'set -e', 'ip link set lo up', 'mount -t tmpfs tmpfs /tmp',
    'mkdir -p /tmp/checkout/build/release/gateway',
    `ln -s ${JSON.stringify(binary)} /tmp/checkout/build/release/gateway/kvgate`,
    `ln -s ${JSON.stringify(path.resolve(shared))} /tmp/shared`,
    'cd /tmp/checkout', 'set +e',
  ].join('\n');
  const epilogue = 'echo "== stopped"; grep -H "^kvgate: stopped" front.log r1.log r2.log r3.log';
  const script = [setup, recipe('cluster-start'), 'echo "== started"', recipe('cluster-stop'), epilogue].join('\n');
  const r = await run('unshare', [...ns, 'bash', '-c', script],
    { timeout: 120000, env: { OMP_NUM_THREADS: '1', OMP_WAIT_POLICY: 'passive' } });
  assert.equal(r.code, 0, `${r.stdout}\n${r.stderr}`);
  const [started, stopped] = r.stdout.split('== started');
  assert.match(started, /^HTTP\/1\.1 200 OK\r?$/m, r.stdout);
  assert.match(started, /^x-kvgate-replica: https:\/\/127\.0\.0\.1:845[123]\r?$/m, r.stdout);
  assert.match(started, /"finish_reason":"length"/);
  assert.match(stopped, /== stopped/);
  // SIGTERM: the front and each replica finished and wrote their ledgers.
  for (const log of ['front', 'r1', 'r2', 'r3'])
    assert.match(stopped, new RegExp(`^${log}\\.log:kvgate: stopped; every finished request is in the ledger$`, 'm'), stopped);
});
