// A WHATWG fetch over node:https with an https.Agent, for clients that take
// a `fetch` (the Vercel AI SDK) rather than an agent: the server's
// self-signed certificate is trusted through the agent's `ca`, as the
// openai client trusts it, never by turning verification off.
import https from 'node:https';
import { Readable } from 'node:stream';

export function agentFetch(agent) {
  return (url, init = {}) => new Promise((resolve, reject) => {
    const headers = Object.fromEntries(new Headers(init.headers ?? {}));
    const req = https.request(String(url), { method: init.method ?? 'GET', headers, agent }, (res) => {
      const out = new Headers();
      for (const [k, v] of Object.entries(res.headers)) out.set(k, Array.isArray(v) ? v.join(', ') : v);
      resolve(new Response(Readable.toWeb(res), { status: res.statusCode, headers: out }));
    });
    req.on('error', reject);
    init.signal?.addEventListener('abort', () => req.destroy(new Error('aborted')));
    if (init.body !== undefined && init.body !== null) req.write(init.body);
    req.end();
  });
}
