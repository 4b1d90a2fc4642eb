// Headless Chromium (Debian's /usr/bin/chromium, or KVGATE_CHROMIUM) driven
// through the DevTools protocol over --remote-debugging-pipe: the browser
// reads commands on fd 3 and writes answers and events on fd 4, each a JSON
// message ended by a NUL byte. No WebSocket and no npm package needed.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

export const chromiumPath = process.env.KVGATE_CHROMIUM || '/usr/bin/chromium';

export async function launchChromium({ width = 1280, height = 1600 } = {}) {
  if (!existsSync(chromiumPath)) throw new Error(`${chromiumPath} is missing: run ops/deps (Debian's chromium)`);
  const profile = mkdtempSync(path.join(tmpdir(), 'kvgate-chromium-'));
  const child = spawn(chromiumPath, [
    '--headless=new', '--no-sandbox', '--disable-gpu', '--ignore-certificate-errors',
    '--no-first-run', '--no-default-browser-check', '--disable-extensions', '--mute-audio',
    `--user-data-dir=${profile}`, `--window-size=${width},${height}`, '--hide-scrollbars',
    '--remote-debugging-pipe', 'about:blank',
  ], { stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d) => { stderr = (stderr + d).slice(-8000); });
  const exited = new Promise((r) => child.once('exit', r));

  let nextId = 0;
  const pending = new Map();
  const listeners = new Set();
  let buffer = '';
  child.stdio[4].on('data', (chunk) => {
    buffer += chunk.toString('utf8');
    for (let end; (end = buffer.indexOf('\0')) >= 0;) {
      const msg = JSON.parse(buffer.slice(0, end));
      buffer = buffer.slice(end + 1);
      if (msg.id !== undefined && pending.has(msg.id)) {
        const { resolve, reject, method } = pending.get(msg.id);
        pending.delete(msg.id);
        if (msg.error) reject(new Error(`${method}: ${msg.error.message}`));
        else resolve(msg.result);
      } else {
        for (const l of listeners) l(msg);
      }
    }
  });
  exited.then((code) => {
    for (const { reject, method } of pending.values()) reject(new Error(`chromium exited (${code}) during ${method}:\n${stderr}`));
    pending.clear();
  });
  function send(method, params = {}, sessionId) {
    const id = ++nextId;
    return new Promise((resolve, reject) => {
      pending.set(id, { resolve, reject, method });
      child.stdio[3].write(JSON.stringify({ id, method, params, sessionId }) + '\0');
    });
  }
  await send('Browser.getVersion');

  return {
    // A new tab at `url`. `problems` collects the page's uncaught exceptions,
    // console errors and browser log errors (a CSP violation is one).
    async open(url) {
      const { targetId } = await send('Target.createTarget', { url: 'about:blank' });
      const { sessionId } = await send('Target.attachToTarget', { targetId, flatten: true });
      const problems = [];
      const onEvent = (m) => {
        if (m.sessionId !== sessionId) return;
        if (m.method === 'Runtime.exceptionThrown') problems.push(m.params.exceptionDetails.exception?.description ?? m.params.exceptionDetails.text);
        if (m.method === 'Runtime.consoleAPICalled' && m.params.type === 'error')
          problems.push(m.params.args.map((a) => a.value ?? a.description).join(' '));
        if (m.method === 'Log.entryAdded' && m.params.entry.level === 'error' && !/favicon/.test(m.params.entry.url ?? ''))
          problems.push(`${m.params.entry.source}: ${m.params.entry.text}`);
      };
      listeners.add(onEvent);
      await send('Runtime.enable', {}, sessionId);
      await send('Log.enable', {}, sessionId);
      await send('Page.enable', {}, sessionId);
      await send('Page.navigate', { url }, sessionId);
      const page = {
        problems,
        async evaluate(expression) {
          const r = await send('Runtime.evaluate', { expression, returnByValue: true, awaitPromise: true }, sessionId);
          if (r.exceptionDetails) throw new Error(`evaluate ${expression}: ${r.exceptionDetails.exception?.description ?? r.exceptionDetails.text}`);
          return r.result.value;
        },
        // Polls `expression` until it is truthy; resolves to its value.
        async waitFor(expression, timeoutMs, what = expression) {
          const deadline = Date.now() + timeoutMs;
          for (;;) {
            const v = await page.evaluate(expression).catch(() => undefined);
            if (v) return v;
            if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
            await new Promise((r) => setTimeout(r, 100));
          }
        },
        // The whole page, `width` CSS pixels wide, as a PNG.
        async screenshot(file) {
          const { result } = await send('Runtime.evaluate',
            { expression: 'Math.ceil(document.body.getBoundingClientRect().bottom + scrollY)', returnByValue: true }, sessionId);
          const h = Math.max(200, result.value);
          await send('Emulation.setDeviceMetricsOverride', { width, height: h, deviceScaleFactor: 1, mobile: false }, sessionId);
          const { data } = await send('Page.captureScreenshot', { format: 'png' }, sessionId);
          await send('Emulation.clearDeviceMetricsOverride', {}, sessionId);
          writeFileSync(file, Buffer.from(data, 'base64'));
        },
        async close() {
          listeners.delete(onEvent);
          await send('Target.closeTarget', { targetId });
        },
      };
      return page;
    },
    async close() {
      await send('Browser.close').catch(() => {});
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
