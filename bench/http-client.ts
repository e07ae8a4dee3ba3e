// What one model call costs Proctor's process in its HTTP client (issue 10: CPU per case).
//   npx tsx bench/http-client.ts [--requests 5000] [--concurrency 50] [--latency-ms 20] [--rounds 3]
//   [--clients http-request,chat,node-http,undici-dispatch,undici-request,fetch]
// The fake model server runs in its own process. Each client, in a fresh process of its own (so neither JIT
// warm-up nor a loaded module carries over), sends a warm-up of 500 chat completion requests and then
// `--requests` more, `--concurrency` in flight, and reports the CPU of that process (process.cpuUsage) per
// measured request and its RSS at the end. The clients take turns, round after round, so a noisy neighbour
// on the machine spreads over all of them.
//   http-request     src/targets/http-fetch.ts's httpRequest: the request function the targets use
//   chat             src/targets/openai-chat.ts's doGenerate: httpRequest plus the body and reply JSON
//   node-http        node:http at its cheapest: a keep-alive agent, options and a header list built once
//   undici-dispatch  undici's Agent.dispatch with a handler that buffers the reply (no streams)
//   undici-request   undici's Agent.request, the reply read with body.text()
//   fetch            Node's built-in fetch
import { spawn } from 'node:child_process';
import { parseArgs } from 'node:util';
import { root, startFakeServer } from './support.js';

const { values } = parseArgs({
  options: {
    requests: { type: 'string', default: '5000' },
    concurrency: { type: 'string', default: '50' },
    'latency-ms': { type: 'string', default: '20' },
    rounds: { type: 'string', default: '3' },
    clients: { type: 'string', default: 'http-request,chat,node-http,undici-dispatch,undici-request,fetch' },
    // Internal: run one client against this URL and print its figures as JSON.
    child: { type: 'string' },
    url: { type: 'string' },
  },
});

const requests = Number(values.requests);
const concurrency = Number(values.concurrency);

/** One call of a client: resolves with the reply's body text. */
type Send = (body: string) => Promise<string>;

const chatBody = (i: number): string =>
  JSON.stringify({
    model: 'fake',
    max_tokens: 256,
    messages: [
      { role: 'user', content: `Ticket REF-${i} about harbour quartz lantern: ${'meadow cipher '.repeat(8)}` },
    ],
  });

const headers = { 'content-type': 'application/json', 'user-agent': 'proctor', authorization: 'Bearer bench' };

const clientOf = async (name: string, base: string): Promise<Send> => {
  const url = new URL(`${base}/chat/completions`);
  if (name === 'http-request') {
    const { httpRequest } = await import('../src/targets/http-fetch.js');
    return async (body) => (await httpRequest(url, { method: 'POST', headers, body })).body.toString('utf8');
  }
  if (name === 'chat') {
    const { openaiChatModel } = await import('../src/targets/openai-chat.js');
    const model = openaiChatModel({ baseUrl: base, model: 'fake', apiKey: 'bench' });
    return async (body) => {
      const reply = await model.doGenerate({
        prompt: [{ role: 'user', content: [{ type: 'text', text: body }] }],
        maxOutputTokens: 256,
      });
      const first = reply.content[0];
      return first?.type === 'text' ? first.text : '';
    };
  }
  if (name === 'undici-dispatch' || name === 'undici-request') {
    const { Agent } = await import('undici');
    const agent = new Agent({ connections: 1024, headersTimeout: 0, bodyTimeout: 0 });
    const path = url.pathname;
    if (name === 'undici-request')
      return async (body) =>
        (await agent.request({ origin: url.origin, path, method: 'POST', headers, body })).body.text();
    return (body) =>
      new Promise((resolve, reject) => {
        const chunks: Buffer[] = [];
        agent.dispatch(
          { origin: url.origin, path, method: 'POST', headers, body },
          {
            onConnect: () => {},
            onHeaders: () => true,
            onData: (chunk) => {
              chunks.push(chunk);
              return true;
            },
            onComplete: () => resolve(Buffer.concat(chunks).toString('utf8')),
            onError: reject,
          },
        );
      });
  }
  if (name === 'node-http') {
    const http = await import('node:http');
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1024 });
    const fixed = ['host', url.host, ...Object.entries(headers).flat()];
    return (body) =>
      new Promise((resolve, reject) => {
        const request = http.request(
          {
            host: url.hostname,
            port: url.port,
            path: url.pathname,
            method: 'POST',
            agent,
            headers: [...fixed, 'content-length', String(Buffer.byteLength(body))],
          },
          (response) => {
            const chunks: Buffer[] = [];
            response.on('data', (chunk: Buffer) => chunks.push(chunk));
            response.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
          },
        );
        request.on('error', reject);
        request.end(body);
      });
  }
  if (name === 'fetch') return async (body) => (await fetch(url, { method: 'POST', headers, body })).text();
  throw new Error(`unknown client ${name}`);
};

/** `count` calls, at most `concurrency` at once. */
const drive = async (send: Send, count: number): Promise<void> => {
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < count) {
      const reply = await send(chatBody(next++));
      if (!reply.includes('REF-')) throw new Error(`unexpected reply: ${reply.slice(0, 200)}`);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, lane));
};

interface Figures {
  cpuUsPerRequest: number;
  rssMb: number;
}

if (values.child !== undefined) {
  const send = await clientOf(values.child, values.url ?? '');
  await drive(send, 500);
  const before = process.cpuUsage();
  await drive(send, requests);
  const used = process.cpuUsage(before);
  const figures: Figures = {
    cpuUsPerRequest: (used.user + used.system) / requests,
    rssMb: process.memoryUsage().rss / 2 ** 20,
  };
  process.stdout.write(`${JSON.stringify(figures)}\n`);
  process.exit(0);
}

const runClient = (name: string, url: string): Promise<Figures> =>
  new Promise((resolve, reject) => {
    const args = ['--import', 'tsx', new URL(import.meta.url).pathname, '--child', name, '--url', url];
    args.push('--requests', String(requests), '--concurrency', String(concurrency));
    const child = spawn(process.execPath, args, { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    child.once('error', reject);
    child.once('close', (code) =>
      code === 0 ? resolve(JSON.parse(out) as Figures) : reject(new Error(`${name} exited with ${code}`)),
    );
  });

const clients = values.clients.split(',').map((c) => c.trim());
const server = await startFakeServer(Number(values['latency-ms']));
const seen = new Map<string, Figures[]>(clients.map((c) => [c, []]));
process.stdout.write(`${requests} requests, ${concurrency} in flight, server latency ${values['latency-ms']} ms\n`);
try {
  for (let round = 1; round <= Number(values.rounds); round++) {
    for (const name of clients) {
      const figures = await runClient(name, server.url);
      seen.get(name)?.push(figures);
      const line = `round ${round} ${name.padEnd(16)} ${figures.cpuUsPerRequest.toFixed(1).padStart(7)} µs CPU/request`;
      process.stdout.write(`${line}  rss ${figures.rssMb.toFixed(0)} MB\n`);
    }
  }
} finally {
  server.stop();
}
const range = (xs: number[], digits: number): string =>
  `${Math.min(...xs).toFixed(digits)}-${Math.max(...xs).toFixed(digits)}`;
process.stdout.write('\nclient            µs CPU/request   rss MB\n');
for (const [name, figures] of seen) {
  const cpu = range(
    figures.map((f) => f.cpuUsPerRequest),
    1,
  );
  const rss = range(
    figures.map((f) => f.rssMb),
    0,
  );
  process.stdout.write(`${name.padEnd(17)} ${cpu.padStart(14)} ${rss.padStart(8)}\n`);
}
