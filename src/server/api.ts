import { Hono } from 'hono';
import { remember } from '../bounded-map.js';
import { reasonsOf } from '../bundle/case-detail.js';
import { caseFiles, readCaseFile } from '../bundle/case-files.js';
import type { Env } from '../plan/env.js';
import type { ProjectConfig } from '../plan/spec.js';
import { cancelGroup } from '../runners/cancel-run.js';
import { openRunner } from '../runners/open.js';
import { isResultCursor } from '../store/result-cursor.js';
import type { Store } from '../store/store.js';
import { artifactResponse } from './artifact-response.js';
import type { BundleIndex } from './bundle-index.js';
import { attemptView, journalHeadChars, prettyHead, resultHeadChars } from './case-view.js';
import { compareGroups, type GroupComparison } from './compare-groups.js';
import { type EventOptions, groupEvents, runsEvents } from './events.js';
import { projectEvals } from './project.js';
import { Sources } from './sources.js';
import { startEvalRun } from './start-run.js';

export interface ApiDeps {
  store: Store;
  /** Runs only bundle folders hold, indexed at start. */
  bundles?: BundleIndex;
  config: ProjectConfig;
  env: Env;
  events: EventOptions;
}

const runsShown = 200;
const matrixCells = 5000;
// Comparisons of finished runs kept (each at most 6 × 500 listed changes): going back to one is instant.
const comparisonsKept = 8;

const intParam = (value: string | undefined, fallback: number, min: number, max: number): number | undefined => {
  if (value === undefined || value === '') return fallback;
  if (!/^\d+$/.test(value)) return undefined;
  const n = Number(value);
  return n >= min && n <= max ? n : undefined;
};

const headParam = (value: string | undefined) => intParam(value, 0, 1, 16 * 1024 * 1024);
const headProblem = 'head must be an integer from 1 to 16777216';

const strings = (value: unknown): string[] | undefined =>
  Array.isArray(value) && value.every((v) => typeof v === 'string') ? value : undefined;

/** The JSON API under /api/v1. Reads go to the store; starting and canceling go through the CLI's own paths. */
export const api = ({ store, bundles, config, env, events }: ApiDeps): Hono => {
  const app = new Hono();
  const sources = new Sources(store, bundles);
  const summariesOf = (group: string) => sources.of(group).summaries;
  const comparisons = new Map<string, GroupComparison>();
  app.use(async (c, next) => {
    await next();
    c.header('Cache-Control', 'no-store');
  });

  // Newest first, a page at a time: `?before=CREATED_AT&before_id=RUN` continues after a page's last run.
  app.get('/runs', async (c) => {
    const limit = intParam(c.req.query('limit'), runsShown, 1, runsShown);
    const createdAt = intParam(c.req.query('before'), -1, 0, Number.MAX_SAFE_INTEGER);
    const groupId = c.req.query('before_id');
    if (limit === undefined || createdAt === undefined || createdAt >= 0 !== (groupId !== undefined))
      return c.json({ error: `limit must be 1 to ${runsShown}; before (a time in ms) comes with before_id` }, 400);
    const runs = await sources.groups(limit, groupId === undefined ? undefined : { createdAt, groupId });
    return c.json({ runs, more: runs.length === limit });
  });

  app.get('/runs/:group', async (c) => {
    const groupId = c.req.param('group');
    const detail = await summariesOf(groupId).group(groupId);
    return detail ? c.json(detail) : c.json({ error: `no run "${groupId}"` }, 404);
  });

  app.get('/runs/:group/cost', async (c) => {
    const groupId = c.req.param('group');
    const summaries = summariesOf(groupId);
    return c.json(await summaries.cost(groupId, await summaries.isLive(groupId)));
  });

  app.get('/runs/:group/matrix', async (c) => {
    const groupId = c.req.param('group');
    const cells = await summariesOf(groupId).matrix(groupId, matrixCells);
    // At the cap, the run may have more cells than were read: the page says so instead of a wrong count.
    return c.json({ cells, complete: cells.length < matrixCells });
  });

  app.get('/runs/:group/runs', async (c) => {
    const groupId = c.req.param('group');
    const runs = await sources.of(groupId).store.listRuns({ groupId, limit: 500 });
    return c.json({ runs: runs.map(({ owner: _owner, metadata: _metadata, ...r }) => r) });
  });

  app.get('/runs/:group/cases', async (c) => {
    const offset = intParam(c.req.query('offset'), 0, 0, Number.MAX_SAFE_INTEGER);
    const limit = intParam(c.req.query('limit'), 200, 1, 500);
    if (offset === undefined || limit === undefined)
      return c.json({ error: 'offset must be an integer ≥ 0 and limit an integer from 1 to 500' }, 400);
    const q = (name: string) => c.req.query(name) || undefined;
    const groupId = c.req.param('group');
    const page = await summariesOf(groupId).cases(groupId, {
      offset,
      limit,
      ...(q('outcome') ? { outcome: q('outcome') } : {}),
      ...(q('target') ? { target: q('target') } : {}),
      ...(q('eval') ? { evalPath: q('eval') } : {}),
      ...(q('error_kind') ? { errorKind: q('error_kind') } : {}),
      ...(q('q') ? { q: q('q') } : {}),
    });
    return c.json({ offset, ...page });
  });

  app.get('/runs/:group/cases/:key', async (c) => {
    const { group, key } = c.req.param();
    const source = sources.of(group);
    const attempts = await source.store.caseAttemptHeads(group, key, resultHeadChars);
    if (attempts.length === 0) return c.json({ error: 'no such case in this run' }, 404);
    const views = await Promise.all(
      attempts.map(async (a) => {
        if (source.bundleDir !== undefined) {
          const bundled = {
            ...a,
            artifacts: caseFiles(source.bundleDir, a.row),
            result: readCaseFile(source.bundleDir, a.row, 'result.json', resultHeadChars) ?? null,
          };
          return attemptView(
            bundled,
            [],
            `/api/v1/bundles/${encodeURIComponent(group)}/cases/${encodeURIComponent(key)}/${a.seq}`,
          );
        }
        const run = await source.store.getRun(a.runId);
        const cut = a.result !== null && a.result.text.length < a.result.length;
        const [journal, steps] = await Promise.all([
          run ? source.store.journalHeads(run.instanceId, journalHeadChars) : [],
          cut ? source.store.resultSteps(a.runId) : undefined,
        ]);
        const pastHead = steps && reasonsOf(steps.map((s) => ({ output: { results: s.results } })));
        return attemptView(a, journal, `/api/v1/artifacts/${a.seq}`, pastHead);
      }),
    );
    return c.json({ key, attempts: views });
  });

  // A bundle's artifact: by the case's attempt and a name from its manifest (a folder's regular files, or a
  // packed result.json), read from inside the bundle and never through a link.
  app.get('/bundles/:group/cases/:key/:seq/:name', async (c) => {
    const { group, key, seq, name } = c.req.param();
    const head = headParam(c.req.query('head'));
    const { bundleDir, store: index } = sources.of(group);
    if (head === undefined) return c.text(headProblem, 400);
    const attempt = bundleDir
      ? (await index.caseAttemptHeads(group, key, 0)).find((a) => String(a.seq) === seq)
      : undefined;
    const file = attempt && bundleDir ? readCaseFile(bundleDir, attempt.row, name, head || undefined) : undefined;
    if (!file) return c.text('no such artifact', 404);
    return artifactResponse(c, name, file, c.req.query('download') === '1');
  });

  // An artifact is named by the result's commit number and a name from its own manifest, never a path.
  // `?head=N` sends only its first N characters (a preview), never reading the rest.
  app.get('/artifacts/:seq/:name', async (c) => {
    const seq = c.req.param('seq');
    const name = c.req.param('name');
    const head = headParam(c.req.query('head'));
    if (head === undefined) return c.text(headProblem, 400);
    const file = /^\d{1,15}$/.test(seq) ? await store.artifactHead(Number(seq), name, head || undefined) : undefined;
    if (!file) return c.text('no such artifact', 404);
    return artifactResponse(c, name, file, c.req.query('download') === '1');
  });

  app.get('/compare', async (c) => {
    const base = c.req.query('base');
    const head = c.req.query('head');
    if (!base || !head) return c.json({ error: 'pass ?base=RUN&head=RUN' }, 400);
    const key = JSON.stringify([base, head]);
    const known = comparisons.get(key);
    if (known) return c.json(known);
    const [a, b] = [sources.of(base), sources.of(head)];
    // Checked before reading: runs finished then are finished in what was read, and never change again.
    const live = (await a.summaries.isLive(base)) || (await b.summaries.isLive(head));
    const compared = await compareGroups({ store: a.store, groupId: base }, { store: b.store, groupId: head });
    if (!live) remember(comparisons, key, compared, comparisonsKept);
    return c.json(compared);
  });

  app.get('/tasks/:run', async (c) => {
    const run = await store.getRun(c.req.param('run'));
    if (!run) return c.json({ error: 'no such run' }, 404);
    const [instance, journal, recorded] = await Promise.all([
      store.getInstance(run.instanceId),
      store.journalHeads(run.instanceId, journalHeadChars),
      run.caseKey === null ? [] : store.resultSteps(run.runId),
    ]);
    // A step's output can hold a 10 MB transcript: only the heads of each entry were read, and are sent as text.
    const entries = journal.map(({ seq, stepId, attempt, createdAt, ops, output }) => ({
      seq,
      stepId,
      attempt,
      createdAt,
      ops: prettyHead(ops),
      output: prettyHead(output),
    }));
    // An eval case journals only its resources: its steps are as its result records them.
    return c.json({ run, instance, journal: entries, recorded });
  });

  app.get('/project', (c) => c.json(projectEvals(config, env)));

  app.get('/events', async (c) => {
    const group = c.req.query('group');
    if (!group) return runsEvents(c, sources, runsShown, events);
    const after = c.req.header('last-event-id') ?? c.req.query('after') ?? '0';
    if (!isResultCursor(after)) return c.json({ error: 'Last-Event-ID must be an event id this server sent' }, 400);
    const source = sources.of(group);
    return groupEvents(c, source.store, source.summaries, group, after, events);
  });

  app.post('/runs', async (c) => {
    const body = (await c.req.json().catch(() => undefined)) as { evals?: unknown; targets?: unknown } | undefined;
    const evals = strings(body?.evals);
    const targets = strings(body?.targets) ?? [];
    if (!evals || evals.length === 0) return c.json({ error: 'choose at least one eval file' }, 400);
    // Only files the project itself offers: a client never names an arbitrary path to run.
    const known = projectEvals(config, env).evals;
    const unknown = evals.filter((e) => !known.some((k) => k.path === e));
    if (unknown.length) return c.json({ error: `not an eval file of this project: ${unknown.join(', ')}` }, 400);
    const offered = new Set(known.filter((k) => evals.includes(k.path)).flatMap((k) => k.targets));
    const foreign = targets.filter((t) => !offered.has(t));
    if (foreign.length) return c.json({ error: `no such target in those evals: ${foreign.join(', ')}` }, 400);
    const started = await startEvalRun(config, env, evals, targets);
    return started.ok ? c.json(started, 201) : c.json({ error: started.message }, 400);
  });

  app.post('/runs/:group/cancel', async (c) => {
    const groupId = c.req.param('group');
    const runner = openRunner(config.runner, store, 1, config.root);
    try {
      return c.json({ requested: await cancelGroup(runner, store, groupId) });
    } finally {
      await runner.stop();
    }
  });

  app.notFound((c) => c.json({ error: 'no such endpoint' }, 404));
  return app;
};
