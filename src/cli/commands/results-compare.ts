import { caseName } from '../../bundle/case-name.js';
import type { CaseChange, CaseSide, Comparison, PassRate } from '../../bundle/compare.js';
import { compareBundles } from '../../bundle/compare-bundles.js';
import { loadProjectConfig } from '../../plan/config.js';
import { selectBundle } from '../../plan/select-bundle.js';
import { exitCodes } from '../exit-codes.js';
import { table } from '../summary-table.js';

// A terminal is for reading: past this many cases a section points to --json for the rest.
const maxListed = 50;

const pct = (rate: PassRate | null): string => (rate ? `${(rate.pass_rate * 100).toFixed(1)}%` : '-');

const points = (delta: number | null): string =>
  delta === null ? '-' : `${delta >= 0 ? '+' : ''}${(delta * 100).toFixed(1)} pp`;

const side = (s: CaseSide | null): string =>
  s ? `${s.outcome}${s.score === null ? '' : ` ${s.score.toFixed(3)}`}` : '-';

const section = (title: string, changes: readonly CaseChange[]): string => {
  if (!changes.length) return '';
  const lines = changes
    .slice(0, maxListed)
    .map((c) => `  ${c.identity.target}  ${caseName(c.identity)}  ${side(c.base)} → ${side(c.head)}`);
  if (changes.length > maxListed) lines.push(`  … and ${changes.length - maxListed} more (--json lists all)`);
  return `${title} (${changes.length})\n${lines.join('\n')}\n\n`;
};

const render = (c: Comparison): string => {
  const rows = [...c.targets, c.overall].map((t) => [t.target, pct(t.base), pct(t.head), points(t.delta)]);
  return [
    `base  ${c.base}\nhead  ${c.head}\n\n`,
    `${table(['target', 'base', 'head', 'delta'], rows)}\n\n`,
    section('regressed', c.regressed),
    section('fixed', c.fixed),
    section('score changed', c.score_changed),
    section('outcome changed', c.outcome_changed),
    section('only in base', c.only_in_base),
    section('only in head', c.only_in_head),
    `${c.verdict}\n`,
  ].join('');
};

/** `proctor results compare BASE HEAD`: exit 1 when a case that passed in BASE fails in HEAD, for CI gates. */
export const resultsCompare = (baseSelector: string, headSelector: string, opts: { json?: boolean }): number => {
  const cwd = process.cwd();
  const config = loadProjectConfig(cwd, process.env);
  const baseDir = selectBundle(baseSelector, config, cwd);
  const headDir = selectBundle(headSelector, config, cwd);
  const comparison = compareBundles(baseDir, headDir, (message) => process.stderr.write(`warning: ${message}\n`));
  process.stdout.write(opts.json ? `${JSON.stringify(comparison, null, 2)}\n` : render(comparison));
  return comparison.counts.regressed > 0 ? exitCodes.failed : exitCodes.ok;
};
