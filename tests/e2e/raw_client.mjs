// Raw-socket helpers for the bad-input end-to-end test: a TLS or TCP
// connection that writes exactly the bytes it is given (or a stream of
// them) and reads back one HTTP response by hand, so that malformed
// requests reach the server as sent; and the server process's pid and open
// file descriptors, found through /proc.
import { readdirSync, readFileSync } from 'node:fs';
import https from 'node:https';
import net from 'node:net';
import tls from 'node:tls';

// The pid of the `kvgate serve` started on dataDir (startServer does not
// expose its child): the one process whose command line names that dir.
export function serverPid(dataDir) {
  const found = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let argv;
    try {
      argv = readFileSync(`/proc/${entry}/cmdline`, 'latin1').split('\0');
    } catch {
      continue;  // it exited meanwhile
    }
    if (argv.includes('serve') && argv.includes(dataDir)) found.push(Number(entry));
  }
  if (found.length !== 1) throw new Error(`expected one kvgate serve on ${dataDir}, found ${found.length}`);
  return found[0];
}

export function fdCount(pid) {
  return readdirSync(`/proc/${pid}/fd`).length;
}

export function hostPort(baseUrl) {
  const u = new URL(baseUrl);
  return { host: u.hostname, port: Number(u.port) };
}

// Parses one HTTP/1.1 response at the start of `buf`: {status, headers,
// body, length (bytes it took)}, or null until the header block and (by
// Content-Length) the whole body have arrived. With `final` (the
// connection closed) a response without Content-Length runs to the end.
export function parseResponse(buf, { final = false } = {}) {
  const end = buf.indexOf('\r\n\r\n');
  if (end < 0) return null;
  const head = buf.subarray(0, end).toString('latin1').split('\r\n');
  const m = head[0].match(/^HTTP\/1\.[01] (\d{3})/);
  if (!m) throw new Error('not an HTTP response: ' + JSON.stringify(head[0]));
  const status = Number(m[1]);
  const headers = {};
  for (const line of head.slice(1)) {
    const i = line.indexOf(':');
    headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
  }
  const start = end + 4;
  if (status >= 100 && status < 200) return { status, headers, body: '', length: start };
  let length;
  if (headers['content-length'] !== undefined) {
    length = start + Number(headers['content-length']);
    if (buf.length < length) return null;
  } else if (final) {
    length = buf.length;
  } else {
    return null;
  }
  return { status, headers, body: buf.subarray(start, length).toString('utf8'), length };
}

// Every whole response in `buf`, in order (interim 1xx ones in `interim`).
export function parseResponses(buf, { final = false } = {}) {
  const responses = [];
  const interim = [];
  let at = 0;
  while (at < buf.length) {
    let r;
    try {
      r = parseResponse(buf.subarray(at), { final });
    } catch {
      break;  // not HTTP: the caller looks at the bytes
    }
    if (!r) break;
    (r.status < 200 ? interim : responses).push(r);
    at += r.length;
  }
  return { responses, interim };
}

// Opens a connection (TLS with the server's certificate as CA, or plain
// TCP), runs `send(socket, state)` to write the request(s), and resolves
// once the server closed the connection, or `endAfter` whole responses
// were read: {response (the first), responses, interim (1xx), closed,
// bytes (all that was read), error, timedOut}. `send` may keep writing
// until state.done (a response arrived or the socket closed). `guardMs` is
// a failure guard only: a connection the server neither answers enough
// nor closes within it resolves with timedOut.
export function exchange({ host, port, tls: useTls = true, ca, send, endAfter = Infinity, guardMs = 20000 }) {
  return new Promise((resolve) => {
    const chunks = [];
    const state = { done: false };
    let error = null;
    let settled = false;
    const socket = useTls
      ? tls.connect({ host, port, ca, servername: 'localhost' })
      : net.connect({ host, port });
    const finish = ({ timedOut = false, closed = true } = {}) => {
      if (settled) return;
      settled = true;
      state.done = true;
      clearTimeout(guard);
      const bytes = Buffer.concat(chunks);
      const { responses, interim } = parseResponses(bytes, { final: closed && !timedOut });
      socket.destroy();
      resolve({ response: responses[0] ?? null, responses, interim, bytes, error, closed: closed && !timedOut, timedOut });
    };
    const guard = setTimeout(() => finish({ timedOut: true }), guardMs);
    socket.on('data', (d) => {
      chunks.push(d);
      const { responses } = parseResponses(Buffer.concat(chunks));
      if (responses.length > 0) state.done = true;  // stop writing
      if (responses.length >= endAfter) finish({ closed: false });
    });
    socket.on('error', (e) => {
      error = e;
      finish();
    });
    socket.on('close', () => finish());
    socket.once(useTls ? 'secureConnect' : 'connect', () => {
      Promise.resolve(send(socket, state)).catch((e) => {
        error = e;
      });
    });
  });
}

// Writes `buf` unless the exchange is over; resolves when the socket can
// take more (so a stream of writes never buffers more than one chunk).
export function writeSome(socket, state, buf) {
  return new Promise((resolve) => {
    if (state.done || socket.destroyed) return resolve(false);
    const onClose = () => resolve(false);
    socket.once('close', onClose);
    const ok = socket.write(buf, () => {
      socket.off('close', onClose);
      resolve(!state.done);
    });
    if (ok) {
      socket.off('close', onClose);
      resolve(!state.done);
    }
  });
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// One HTTPS request on a connection of its own (no keep-alive), so that no
// client connection outlives it: {status, headers, body, json}.
export function httpsRequest(baseUrl, ca, method, route, { headers = {}, body, agent } = {}) {
  return new Promise((resolve, reject) => {
    const req = https.request(baseUrl + route, {
      method,
      headers,
      ca,
      agent: agent ?? new https.Agent({ ca, keepAlive: false }),
    }, (res) => {
      let data = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (data += c));
      res.on('end', () => {
        let json = null;
        try {
          json = data ? JSON.parse(data) : null;
        } catch {
          json = null;
        }
        resolve({ status: res.statusCode, headers: res.headers, body: data, json });
      });
    });
    req.on('error', reject);
    if (body !== undefined) req.write(typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body));
    req.end();
  });
}
