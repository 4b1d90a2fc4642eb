// Retakes docs/dashboard-admin.png and docs/dashboard-tenant.png: the real
// server, three tenants sending requests with shared prefixes (one of them
// over its rate limit) for a while, the dashboard open on the admin token and
// on one tenant's key the whole time, then a full-page screenshot of each,
// 1280 CSS pixels wide.
//
//   KVGATE_BINARY=build/release/gateway/kvgate KVGATE_SHARED=../shared \
//     node tests/e2e/dashboard_screenshots.mjs [seconds of traffic, default 40]
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import OpenAI from 'openai';
import { launchChromium } from './chromium.mjs';
import { startServer } from './server.mjs';

const seconds = Number(process.argv[2] ?? 40);
const docs = path.join(path.dirname(fileURLToPath(import.meta.url)), '../../docs');
const model = 'stories260K';
const stories = [
  'Once upon a time, there was a little girl named Lily. She loved to play outside in the sunshine.',
  'One day, a boy named Tom went to the park with his mom. He saw a big red ball under a tree.',
  'The cat sat on the mat and looked at the bird in the sky. The bird sang a happy song.',
];

const server = await startServer();
const browser = await launchChromium({ width: 1280, height: 1600 });
try {
  const admin = async (method, route, body) => JSON.parse((await server.request(method, route, {
    headers: { authorization: `Bearer ${server.adminToken}`, 'content-type': 'application/json' }, body })).body);
  const tenants = [{ id: 'demo', key: server.apiKey }];
  for (const [id, quotas] of [['acme', {}], ['globex', { requests_per_minute: 30 }]]) {
    await admin('POST', '/admin/tenants', { id, plan_id: 'demo', quotas });
    tenants.push({ id, key: (await admin('POST', `/admin/tenants/${id}/keys`, {})).api_key });
  }
  const url = (c) => `${server.baseUrl}/dashboard#token=${encodeURIComponent(c)}`;
  const adminTab = await browser.open(url(server.adminToken));
  const tenantTab = await browser.open(url(tenants[1].key));

  const end = Date.now() + seconds * 1000;
  await Promise.all(tenants.map(async (t, i) => {
    const client = new OpenAI({ apiKey: t.key, baseURL: server.baseUrl + '/v1', httpAgent: server.agent, maxRetries: 0 });
    for (let n = 0; Date.now() < end; ++n) {
      // Mostly a known story (cached after its first time), sometimes with a new ending.
      const prompt = stories[(n + i) % stories.length] + (n % (3 + i) === 0 ? ` And then ${n} more things happened.` : '');
      try {
        await client.completions.create({ model, prompt, max_tokens: 8 + ((n * 7) % 24), temperature: 0.7, seed: n });
      } catch (e) {
        if (!(e instanceof OpenAI.RateLimitError)) throw e;
        await new Promise((r) => setTimeout(r, 300));
      }
      await new Promise((r) => setTimeout(r, 40 + 60 * i));
    }
  }));
  // One more poll after the last request, so the figures are the final ones.
  await new Promise((r) => setTimeout(r, 2500));
  await adminTab.screenshot(path.join(docs, 'dashboard-admin.png'));
  await tenantTab.screenshot(path.join(docs, 'dashboard-tenant.png'));
  const problems = [...adminTab.problems, ...tenantTab.problems];
  if (problems.length) throw new Error('the page logged:\n' + problems.join('\n'));
  console.log(`wrote ${path.join(docs, 'dashboard-admin.png')} and dashboard-tenant.png`);
} finally {
  await browser.close();
  await server.stop();
}
