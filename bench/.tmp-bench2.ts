import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { generateText } from 'ai';
import { openai } from '../src/targets/openai.js';
const url = 'http://127.0.0.1:37885/v1';
const N = 5000, C = 50;
const t1 = openai.create(openai.config.parse({ base_url: url, model: 'm', api_key: 'k', timeout_s: 30 }), { baseDir: '.', env: {} });
const t2 = openai.create(openai.config.parse({ base_url: url, model: 'm', api_key: 'k' }), { baseDir: '.', env: {} });
const model = createOpenAICompatible({ name: 'x', baseURL: url, apiKey: 'k', includeUsage: true }).chatModel('m');
async function pool(fn: (i: number) => Promise<unknown>) {
  let next = 0;
  await Promise.all(Array.from({ length: C }, async () => { while (next < N) { const i = next++; await fn(i); } }));
}
const variants = {
  raw: (i: number) => generateText({ model, prompt: 'p' + i, maxRetries: 0 }),
  rawSignal: (i: number) => generateText({ model, prompt: 'p' + i, maxRetries: 0, abortSignal: new AbortController().signal }),
  targetTimeout: (i: number) => t1.invoke({ prompt: 'p' + i, vars: {} }, new AbortController().signal),
  targetNoTimeout: (i: number) => t2.invoke({ prompt: 'p' + i, vars: {} }, new AbortController().signal),
};
for (const round of [1, 2, 3]) {
  for (const [name, fn] of Object.entries(variants)) {
    const cpu = process.cpuUsage(); const t = performance.now();
    await pool(fn);
    const u = process.cpuUsage(cpu);
    console.log(round, name.padEnd(16), 'wall', Math.round(performance.now() - t), 'ms; cpu/call', ((u.user + u.system) / N / 1000).toFixed(3), 'ms');
  }
}
