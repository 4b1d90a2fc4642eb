// A reader for the Prometheus text exposition format 0.0.4, enough for the
// tests to read what kvgate's /metrics says: each family's TYPE and HELP,
// and every sample with its labels and value. It throws on a line it cannot
// read, so a malformed exposition fails the test that reads it (promtool
// checks the format more strictly; this only needs to be right on what it
// accepts).

// One label set `{a="x",b="y"}` from position i of line (just after `{`);
// returns [labels, index after the closing brace].
function readLabels(line, i) {
  const labels = {};
  for (;;) {
    while (line[i] === ' ') ++i;
    if (line[i] === '}') return [labels, i + 1];
    const m = /^[a-zA-Z_][a-zA-Z0-9_]*/.exec(line.slice(i));
    if (!m) throw new Error(`bad label name at column ${i}: ${line}`);
    const name = m[0];
    i += name.length;
    while (line[i] === ' ') ++i;
    if (line[i] !== '=' || line[i + 1] !== '"') throw new Error(`expected ="value" at column ${i}: ${line}`);
    i += 2;
    let value = '';
    for (;;) {
      const c = line[i++];
      if (c === undefined) throw new Error(`unterminated label value: ${line}`);
      if (c === '"') break;
      if (c === '\\') {
        const e = line[i++];
        if (e === 'n') value += '\n';
        else if (e === '\\' || e === '"') value += e;
        else throw new Error(`bad escape \\${e} in a label value: ${line}`);
      } else {
        value += c;
      }
    }
    if (Object.hasOwn(labels, name)) throw new Error(`label ${name} twice: ${line}`);
    labels[name] = value;
    while (line[i] === ' ') ++i;
    if (line[i] === ',') ++i;
    else if (line[i] !== '}') throw new Error(`expected , or } at column ${i}: ${line}`);
  }
}

function readValue(s, line) {
  if (s === '+Inf' || s === 'Inf') return Infinity;
  if (s === '-Inf') return -Infinity;
  if (s === 'NaN') return NaN;
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(s)) throw new Error(`bad value ${s}: ${line}`);
  return Number(s);
}

// → { families: Map(name → {type, help}), samples: [{name, labels, value}] }
export function parseExposition(text) {
  const families = new Map();
  const samples = [];
  const family = (name) => {
    if (!families.has(name)) families.set(name, { type: 'untyped', help: null });
    return families.get(name);
  };
  for (const line of text.split('\n')) {
    if (line === '') continue;
    if (line.startsWith('#')) {
      const m = /^# (HELP|TYPE) ([a-zA-Z_:][a-zA-Z0-9_:]*) ?(.*)$/.exec(line);
      if (!m) continue;  // a plain comment
      if (m[1] === 'TYPE') family(m[2]).type = m[3];
      else family(m[2]).help = m[3].replace(/\\n/g, '\n').replace(/\\\\/g, '\\');
      continue;
    }
    const m = /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(line);
    if (!m) throw new Error(`bad sample line: ${line}`);
    const name = m[0];
    let i = name.length;
    let labels = {};
    if (line[i] === '{') [labels, i] = readLabels(line, i + 1);
    const rest = line.slice(i).trim().split(/\s+/);
    if (rest.length < 1 || rest.length > 2 || rest[0] === '') throw new Error(`bad sample line: ${line}`);
    samples.push({ name, labels, value: readValue(rest[0], line) });
  }
  return { families, samples };
}

// The samples named `name` whose labels include every pair of `match`.
export function select(exposition, name, match = {}) {
  return exposition.samples.filter(
    (s) => s.name === name && Object.entries(match).every(([k, v]) => s.labels[k] === v));
}

// Their sum; 0 when there is none (a counter not yet created reads 0).
export function sum(exposition, name, match = {}) {
  return select(exposition, name, match).reduce((a, s) => a + s.value, 0);
}

// The family a sample belongs to: `x_bucket`, `x_sum`, `x_count` of a
// histogram or summary `x`, else the sample's own name.
export function familyOf(exposition, sampleName) {
  const m = /^(.*)_(bucket|sum|count)$/.exec(sampleName);
  if (m && ['histogram', 'summary'].includes(exposition.families.get(m[1])?.type)) return m[1];
  return sampleName;
}
