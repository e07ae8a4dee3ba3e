import { type Exporter, type ExportSource, exportBytes } from '../../src/bundle/exporters.js';
import { type CaseResult, type IndexRow, toIndexRow } from '../../src/bundle/row.js';
import { visitLatest } from '../../src/bundle/row-visitor.js';
import { BundleWriter } from '../../src/bundle/writer.js';
import type { ErrorRecord } from '../../src/errors.js';
import type { Outcome } from '../../src/records.js';
import { type TempProject, tempProject } from '../support/project.js';

export interface FixtureCase {
  test: string;
  outcome: Outcome;
  target?: string;
  /** The identity's eval path (default `a.eval.yaml`). */
  eval?: string;
  score?: number | null;
  error?: ErrorRecord | null;
  /** Written to the case's result.json with one failing grader reason, when given. */
  output?: string;
  reason?: string;
}

const projects: TempProject[] = [];

/** A passed row of `key` (test `key` on target echo), with `over` replacing any field of its result. */
export const aRow = (key: string, over: Partial<CaseResult> = {}): IndexRow =>
  toIndexRow({
    identity: { eval: 'a.eval.yaml', test: key, prompt: 'p1', target: 'echo', sample: 0 },
    key,
    fingerprint: 'f',
    outcome: 'passed',
    score: 1,
    error: null,
    attempts: 1,
    durationMs: 1,
    usage: { inputTokens: 0, outputTokens: 0, costUsd: 0 },
    runId: `r-${key}`,
    groupId: 'g',
    startedAt: 0,
    finishedAt: 1,
    artifacts: `cases/${key}/1`,
    ...over,
  });

/** Removes every bundle written so far: call it in afterAll. */
export const removeBundles = (): void => {
  for (const p of projects.splice(0)) p.remove();
};

/** Writes a bundle of the given cases, in order (a later case with the same test and target supersedes). */
export const writeBundle = (cases: readonly FixtureCase[]): string => {
  const project = tempProject();
  projects.push(project);
  const dir = project.path('bundle');
  const writer = new BundleWriter(dir);
  cases.forEach((c, i) => {
    const target = c.target ?? 'echo';
    const key = `${c.test}-${target}`;
    const attempt = i + 1;
    const row = JSON.stringify(
      toIndexRow({
        identity: { eval: c.eval ?? 'a.eval.yaml', test: c.test, prompt: 'p1', target, sample: 0 },
        key,
        fingerprint: 'f',
        outcome: c.outcome,
        score: c.score === undefined ? (c.outcome === 'passed' ? 1 : 0) : c.score,
        error: c.error ?? null,
        attempts: 1,
        durationMs: 10,
        usage: { inputTokens: 0, outputTokens: 0, costUsd: 0 },
        runId: 'r',
        groupId: 'g',
        startedAt: 0,
        finishedAt: 10,
        artifacts: `cases/${key}/${attempt}`,
      }),
    );
    if (c.output === undefined) {
      writer.appendLines([row]);
      return;
    }
    // As a run writes it: a case whose only file is its result.json is packed.
    const verify = { results: [{ id: 'equals', pass: false, score: 0, reason: c.reason ?? 'no match' }] };
    writer.writeCase(
      key,
      attempt,
      { 'result.json': JSON.stringify({ output: c.output, steps: [{ stepId: 'verify', output: verify }] }) },
      row,
    );
    writer.flush();
  });
  writer.close();
  return dir;
};

/** The export of `source.dir` by a pass of its own over its index, as one string. */
export const renderExport = (exporter: Exporter, source: ExportSource): string => {
  const pass = exporter(source);
  try {
    visitLatest(source.dir, [pass]);
    const pieces = [...exportBytes(pass.document())];
    return Buffer.concat(pieces.map((p) => (typeof p === 'string' ? Buffer.from(p) : p))).toString();
  } finally {
    pass.close();
  }
};
