import { appendFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { toIndexRow } from '../../src/bundle/row.js';
import { caseKey } from '../../src/plan/identity.js';
import { readPriorResults } from '../../src/plan/prior-results.js';
import type { CaseIdentity, Outcome } from '../../src/records.js';
import { type TempProject, tempProject } from '../support/project.js';

const projects: TempProject[] = [];
afterAll(() => {
  for (const p of projects) p.remove();
});

const identityOf = (test: string, evalPath = 'a.eval.yaml'): CaseIdentity => ({
  eval: evalPath,
  test,
  prompt: 'p1',
  target: 'echo',
  sample: 0,
});

/** A row as the CLI writes it, keyed by its identity unless `key` says otherwise. */
const line = (identity: CaseIdentity, outcome: Outcome, key = caseKey(identity)): string =>
  `${JSON.stringify(
    toIndexRow({
      identity,
      key,
      fingerprint: 'f1',
      outcome,
      score: null,
      error: null,
      attempts: 1,
      durationMs: 1,
      usage: { inputTokens: 0, outputTokens: 0, costUsd: 0 },
      runId: 'r',
      groupId: 'g',
      startedAt: 0,
      finishedAt: 1,
      artifacts: `cases/${key}/1`,
    }),
  )}\n`;

const projectWith = (lines: readonly string[]): TempProject => {
  const project = tempProject();
  projects.push(project);
  mkdirSync(project.path('bundle'));
  appendFileSync(project.path('bundle/index.jsonl'), lines.join(''));
  return project;
};

const read = (project: TempProject) => readPriorResults(project.path('bundle'), project.dir, ['a.eval.yaml']);

const summary = (prior: ReturnType<typeof read>) =>
  [...prior.byKey].map(([key, c]) => ({ key, rows: c.rows, outcome: c.outcome, eval: c.identity?.eval }));

describe('readPriorResults', () => {
  it('counts a case’s rows together when this machine and another spelled its eval path differently', () => {
    const x = identityOf('x');
    const y = identityOf('y');
    const project = projectWith([]);
    const absolute = identityOf('x', join(project.dir, 'a.eval.yaml'));
    const foreign = identityOf('y', '/other/machine/a.eval.yaml');
    appendFileSync(
      project.path('bundle/index.jsonl'),
      [
        line(foreign, 'error'),
        line(x, 'failed'),
        line(absolute, 'passed'),
        line(y, 'passed'),
        line(absolute, 'error'),
        line(x, 'passed'),
      ].join(''),
    );
    // In the order each case's first row was written, its latest row and all its rows, whatever their path.
    expect(summary(read(project))).toEqual([
      { key: caseKey(y), rows: 2, outcome: 'passed', eval: 'a.eval.yaml' },
      { key: caseKey(x), rows: 4, outcome: 'passed', eval: 'a.eval.yaml' },
    ]);
  });

  it('reads each row by its own identity when a key’s rows name different cases, and legacy rows coarsely', () => {
    const x = identityOf('x');
    const y = identityOf('y');
    const project = projectWith([
      line(x, 'failed', 'shared'),
      line(y, 'error', 'shared'),
      `${JSON.stringify({ key: 'legacy', outcome: 'failed', test: 'z', target: 'echo' })}\n`,
    ]);
    const prior = read(project);
    // A row whose path is as written keeps its own key; the legacy row is found by test and target.
    expect(summary(prior)).toEqual([{ key: 'shared', rows: 2, outcome: 'error', eval: undefined }]);
    expect([...prior.byCoarse.keys()]).toEqual(['z::echo']);
    const respelled = projectWith([
      line(x, 'failed', 'shared'),
      line(identityOf('y', './a.eval.yaml'), 'error', 'shared'),
    ]);
    expect(summary(read(respelled))).toEqual([
      { key: 'shared', rows: 1, outcome: 'failed', eval: undefined },
      { key: caseKey(y), rows: 1, outcome: 'error', eval: 'a.eval.yaml' },
    ]);
  });
});
