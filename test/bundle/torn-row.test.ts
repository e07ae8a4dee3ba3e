import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compareRows } from '../../src/bundle/compare.js';
import { type ExportFormat, exporters, exportFormats } from '../../src/bundle/exporters.js';
import { latestRows } from '../../src/bundle/latest-rows.js';
import { readIndex } from '../../src/bundle/reader.js';
import type { IndexRow } from '../../src/bundle/row.js';
import { buildSummary, digestIndex } from '../../src/bundle/summary.js';
import { BundleWriter } from '../../src/bundle/writer.js';
import { readPriorResults } from '../../src/plan/prior-results.js';
import { runCli } from '../support/cli.js';
import { type FakeModelServer, startFakeModelServer } from '../support/fake-model-server.js';
import { type TempProject, tempProject } from '../support/project.js';
import { aRow, renderExport } from './fixture.js';

// Real rows, as the CLI writes them: a pass, a graded failure and an error (the richest row: an error object).
let server: FakeModelServer;
let project: TempProject;
let lines: Buffer[];
const evalPath = 'a.eval.yaml';

beforeAll(async () => {
  server = await startFakeModelServer();
  project = tempProject({
    [evalPath]: `targets: [{ label: model, kind: openai, base_url: "${server.url}", model: m, api_key: k }]
prompts: ["{{ q }}"]
tests:
  - { id: pass, vars: { q: "p" }, assert: [{ type: contains, value: echo }] }
  - { id: fail, vars: { q: "f" }, assert: [{ type: contains, value: "nope" }] }
  - { id: err, vars: { q: "e [[status:500]]" }, assert: [{ type: contains, value: echo }] }
`,
  });
  const run = await runCli(['eval', 'run', '-q', '--retries', '0', '-o', 'out'], { cwd: project.dir });
  expect(run.code, run.stderr).toBe(1);
  const text = readFileSync(project.path('out/index.jsonl'));
  lines = [];
  for (let from = 0; from < text.length; ) {
    const nl = text.indexOf(0x0a, from);
    lines.push(text.subarray(from, nl));
    from = nl + 1;
  }
  expect(lines).toHaveLength(3);
});

afterAll(async () => {
  project.remove();
  await server.close();
});

const testOf = (line: Buffer): string => (JSON.parse(line.toString()) as IndexRow).identity.test;
const lineOf = (test: string): Buffer => lines.find((l) => testOf(l) === test) as Buffer;

/** What every reader of the bundle must agree on after a torn write. */
interface Expected {
  tests: string[];
  skipped: number;
}

const exportText = (format: ExportFormat, dir: string, warnings: string[]): string => {
  // The exporters are loaded once below; a sync render keeps the per-offset loop fast.
  const render = loaded[format];
  return renderExport(render, { dir, runId: 'r', warn: (m) => warnings.push(m) });
};

let loaded: Record<ExportFormat, Awaited<ReturnType<(typeof exporters)[ExportFormat]['load']>>>;
beforeAll(async () => {
  loaded = Object.fromEntries(
    await Promise.all(exportFormats.map(async (f) => [f, await exporters[f].load()] as const)),
  ) as typeof loaded;
});

const checkReaders = (dir: string, want: Expected, where: string): void => {
  const tests = (rows: Iterable<IndexRow>) => [...rows].map((r) => r.identity.test).sort();
  const latest = latestRows(dir);
  expect({ tests: tests(latest.rows), skipped: latest.skippedLines }, `latestRows ${where}`).toEqual(want);
  const digest = digestIndex(dir);
  expect({ tests: tests(digest.latest.values()), skipped: digest.skippedLines }, `digestIndex ${where}`).toEqual(want);
  const summary = buildSummary('r', digest);
  expect([summary.counts.total, summary.skipped_lines], `summary ${where}`).toEqual([want.tests.length, want.skipped]);
  const prior = readPriorResults(dir, project.dir, [evalPath]);
  expect(prior.byKey.size, `prior ${where}`).toBe(want.tests.length);
  expect(prior.skipped.length, `prior ${where}`).toBe(want.skipped);
  const compared = compareRows({ base: 'a', head: 'b' }, latestRows(dir).rows, latestRows(dir).rows);
  expect(compared.counts.common, `compare ${where}`).toBe(want.tests.length);
  for (const format of exportFormats) {
    const warnings: string[] = [];
    const text = exportText(format, dir, warnings);
    expect(warnings, `${format} ${where}`).toHaveLength(want.skipped);
    if (format === 'jsonl')
      expect(text.split('\n').filter(Boolean), `${format} ${where}`).toHaveLength(want.tests.length);
  }
};

describe('a torn row, cut at every byte offset', () => {
  const dir = () => project.path('torn');
  const write = (bytes: Buffer): void => {
    mkdirSync(dir(), { recursive: true });
    writeFileSync(join(dir(), 'index.jsonl'), bytes);
  };

  for (const torn of ['fail', 'err']) {
    it(`as the last line (${torn}): skipped with one warning by every reader, cut off by the next writer`, () => {
      const row = lineOf(torn);
      const kept = lines.filter((l) => l !== row);
      const head = Buffer.concat(kept.flatMap((l) => [l, Buffer.from('\n')]));
      const others = kept.map(testOf).sort();
      const appended = JSON.parse(kept[0]?.toString() ?? '') as IndexRow;
      for (let cut = 0; cut <= row.length; cut++) {
        write(Buffer.concat([head, row.subarray(0, cut)]));
        const whole = cut === row.length;
        const want = { tests: whole ? [...others, torn].sort() : others, skipped: cut > 0 && !whole ? 1 : 0 };
        checkReaders(dir(), want, `at byte ${cut}`);
        // The next writer cuts a torn tail (never a committed row) instead of gluing a newline after it, and
        // keeps a whole row that only lacks its newline.
        const writer = new BundleWriter(dir());
        writer.appendLines([
          JSON.stringify(
            aRow('next', {
              identity: { ...appended.identity, test: 'next' },
              fingerprint: appended.fingerprint,
              runId: 'r2',
              groupId: 'g2',
              artifacts: 'cases/next/1',
            }),
          ),
        ]);
        writer.close();
        const after = readIndex(dir());
        expect(after.skipped, `after append at byte ${cut}`).toEqual([]);
        expect(after.rows.map((r) => r.identity.test).sort(), `after append at byte ${cut}`).toEqual(
          [...want.tests, 'next'].sort(),
        );
      }
    });
  }

  it('as a middle line (a torn tail an older writer ended with a newline): skipped by every reader', () => {
    const row = lineOf('fail');
    const [first, last] = lines.filter((l) => l !== row) as [Buffer, Buffer];
    for (let cut = 1; cut < row.length; cut++) {
      write(
        Buffer.concat([first, Buffer.from('\n'), row.subarray(0, cut), Buffer.from('\n'), last, Buffer.from('\n')]),
      );
      checkReaders(dir(), { tests: [testOf(first), testOf(last)].sort(), skipped: 1 }, `at byte ${cut}`);
    }
  });
});
