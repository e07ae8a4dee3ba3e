import { afterAll, describe, expect, it } from 'vitest';
import { forEachRowHead } from '../../src/bundle/reader.js';
import { BundleWriter } from '../../src/bundle/writer.js';
import { type TempProject, tempProject } from '../support/project.js';

const projects: TempProject[] = [];
afterAll(() => {
  for (const p of projects) p.remove();
});

const bundleOf = (evalPaths: readonly string[]): string => {
  const project = tempProject();
  projects.push(project);
  const writer = new BundleWriter(project.path('bundle'));
  evalPaths.forEach((path, i) => {
    writer.appendRow({
      identity: { eval: path, test: `t${i}`, prompt: 'p1', target: 'echo', sample: 0 },
      key: `k${i}`,
      fingerprint: 'f',
      outcome: 'passed',
      score: 1,
      error: null,
      attempts: 1,
      durationMs: 1,
      usage: { inputTokens: 0, outputTokens: 0, costUsd: 0 },
      runId: 'r',
      groupId: 'g',
      startedAt: 0,
      finishedAt: 1,
      artifacts: `cases/k${i}/1`,
    });
  });
  writer.close();
  return project.path('bundle');
};

describe('forEachRowHead', () => {
  // The reader reuses the previous row's eval path when the bytes are the same: paths of one length, paths that
  // differ in one byte, and the empty path must each still read as written.
  it('reads each row’s eval path as written, whatever the rows before it named', () => {
    const paths = ['a.eval.yaml', 'a.eval.yaml', 'b.eval.yaml', 'a.eval.yaml', 'evals/ü.eval.yaml', '', 'a.eval.yml'];
    const seen: (string | undefined)[] = [];
    forEachRowHead(bundleOf(paths), (head) => seen.push(head.evalPath));
    expect(seen).toEqual(paths);
    const again: (string | undefined)[] = [];
    forEachRowHead(bundleOf(['b.eval.yaml', 'a.eval.yaml']), (head) => again.push(head.evalPath));
    expect(again).toEqual(['b.eval.yaml', 'a.eval.yaml']);
  });
});
