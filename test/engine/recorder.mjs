// A module step for engine tests: logs `start:<id>` / `end:<id>` to `with.log`, then does what `with` says.
import { appendFileSync, existsSync, readFileSync } from 'node:fs';

const lines = (log) => (existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter(Boolean) : []);

const until = (ready, signal) =>
  new Promise((resolve, reject) => {
    const poll = setInterval(() => {
      if (!ready()) return;
      clearInterval(poll);
      resolve();
    }, 10);
    signal.addEventListener('abort', () => {
      clearInterval(poll);
      reject(new Error('aborted'));
    });
  });

export async function execute(ctx) {
  const c = ctx.config;
  appendFileSync(c.log, `start:${ctx.stepId}\n`);
  const runs = lines(c.log).filter((l) => l === `start:${ctx.stepId}`).length;
  if (c.waitFor) await until(() => lines(c.log).includes(c.waitFor), ctx.signal);
  if (c.hang) await until(() => false, ctx.signal);
  if (runs <= (c.failTimes ?? 0))
    throw Object.assign(new Error(`planned failure ${runs}`), { kind: c.kind ?? 'setup_failed' });
  appendFileSync(c.log, `end:${ctx.stepId}\n`);
  return {
    set: c.set ?? {},
    output: { seen: ctx.context },
    ...(c.failVerdictTimes !== undefined ? { passed: runs > c.failVerdictTimes } : {}),
  };
}
