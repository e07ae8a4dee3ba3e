import type { Outcome } from '../records.js';
import { readCaseDetail } from './case-detail.js';
import { caseName } from './case-name.js';
import { type Exporter, type ExportPart, SpooledExport } from './exporters.js';
import { html } from './markup.js';
import type { IndexRow, UsageRow } from './row.js';
import { formatUsd, type OutcomeCounts, type Summary, SummaryTally } from './summary.js';

// A page with a megabyte per case would not open; the full output stays in the bundle's artifacts.
const maxOutputChars = 20_000;

const outcomes: readonly Outcome[] = ['passed', 'failed', 'error', 'canceled'];

// The outcome filter is radio buttons and sibling selectors: it works with scripts disabled and under any
// Content-Security-Policy, and the page needs nothing but itself.
const style = `
body{font:14px/1.45 system-ui,sans-serif;margin:2rem auto;max-width:72rem;padding:0 1rem;color:#1d1d1f}
h1{font-size:1.4rem}table{border-collapse:collapse;margin:1rem 0}
th,td{padding:.3rem .7rem;border-bottom:1px solid #ddd;text-align:right}th:first-child,td:first-child{text-align:left}
.filter{position:absolute;opacity:0}.filter+label{display:inline-block;padding:.2rem .7rem;margin:0 .3rem .8rem 0;border:1px solid #bbb;border-radius:1rem;cursor:pointer}
.filter:checked+label{background:#1d1d1f;color:#fff}
${outcomes.map((o) => `#f-${o}:checked~.cases .case:not(.o-${o})`).join(',')}{display:none}
details.case{border:1px solid #ddd;border-radius:.4rem;margin:.4rem 0;padding:.3rem .7rem}
summary{cursor:pointer}.badge{display:inline-block;min-width:4.5rem;font-weight:600}
.o-passed .badge{color:#1a7f37}.o-failed .badge{color:#cf222e}.o-error .badge{color:#9a6700}.o-canceled .badge{color:#6e7781}
pre{background:#f6f8fa;padding:.6rem;overflow:auto;white-space:pre-wrap;word-break:break-word}
.reasons{list-style:none;padding:0}.reasons li::before{content:"✓ ";color:#1a7f37}.reasons li.fail::before{content:"✗ ";color:#cf222e}
.muted{color:#6e7781}`;

const pct = (rate: number): string => `${(rate * 100).toFixed(1)}%`;

const countCells = (c: OutcomeCounts): string =>
  [c.total, c.passed, c.failed, c.error, c.canceled].map((n) => `<td>${n}</td>`).join('') +
  `<td>${pct(c.pass_rate)}</td>`;

/** Target spend and judge spend, apart. */
const costCells = (u: { usage: UsageRow; judge_usage?: UsageRow }): string =>
  `<td>${formatUsd(u.usage)}</td><td>${formatUsd(u.judge_usage)}</td>`;

const summaryTable = (s: Summary): string => {
  const rows = s.targets.map(
    (t) =>
      `<tr><td>${html(t.target)}</td>${countCells(t)}<td>${t.mean_score === null ? '-' : t.mean_score.toFixed(3)}</td><td>${t.duration_ms.p50}</td>${costCells(t)}</tr>`,
  );
  rows.push(`<tr><th>all</th>${countCells(s.counts)}<td></td><td>${s.duration_ms.p50}</td>${costCells(s)}</tr>`);
  return `<table><thead><tr><th>target</th><th>cases</th><th>passed</th><th>failed</th><th>errors</th><th>canceled</th><th>pass rate</th><th>score</th><th>p50 ms</th><th>cost $</th><th>judge $</th></tr></thead><tbody>${rows.join('')}</tbody></table>`;
};

const filters = (counts: OutcomeCounts): string =>
  [
    `<input class="filter" type="radio" name="outcome" id="f-all" checked><label for="f-all">all (${counts.total})</label>`,
    ...outcomes.map(
      (o) =>
        `<input class="filter" type="radio" name="outcome" id="f-${o}"><label for="f-${o}">${o} (${counts[o]})</label>`,
    ),
  ].join('');

const caseItem = (dir: string, row: IndexRow): string => {
  const detail = readCaseDetail(dir, row);
  const score = row.score === null ? '-' : row.score.toFixed(3);
  const error = row.error ? `<p><strong>${html(row.error.kind)}</strong>: ${html(row.error.message)}</p>` : '';
  const reasons = detail.reasons.length
    ? `<ul class="reasons">${detail.reasons.map((r) => `<li class="${r.pass ? 'pass' : 'fail'}">${html(r.id)}: ${html(r.reason)}</li>`).join('')}</ul>`
    : '';
  const output =
    detail.output === undefined
      ? ''
      : `<pre>${html(detail.output.slice(0, maxOutputChars))}${detail.output.length > maxOutputChars ? '\n…(truncated; see the artifacts)' : ''}</pre>`;
  return `<details class="case o-${html(row.outcome)}"><summary><span class="badge">${html(row.outcome)}</span> ${html(caseName(row.identity))} <span class="muted">· ${html(row.identity.target)} · score ${score}</span></summary>${error}${reasons}${output}<p class="muted">${html(row.artifacts)} · ${row.duration_ms} ms</p></details>\n`;
};

class HtmlExport extends SpooledExport {
  private readonly summary = new SummaryTally();
  private readonly cases = this.spool();

  visit(row: IndexRow): void {
    this.summary.visit(row);
    this.cases.write(caseItem(this.source.dir, row));
  }

  *document(): Generator<ExportPart> {
    this.warnSkipped();
    const { runId } = this.source;
    const summary = this.summary.summary(runId, this.index);
    const title = `Proctor results · ${html(runId)}`;
    yield `<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>${title}</title><style>${style}</style></head><body>\n`;
    yield `<h1>${title}</h1><p class="muted">exported ${html(summary.updated_at)}${summary.mixed ? ' · mixed bundle: rows from several runs' : ''}</p>\n`;
    yield `${summaryTable(summary)}\n<h2>Cases</h2>\n${filters(summary.counts)}\n<div class="cases">\n`;
    yield this.cases;
    yield '</div>\n</body></html>\n';
  }
}

/** One static page: the summary table and every case, filterable by outcome, with outputs and grader reasons. */
export const exportHtml: Exporter = (source) => new HtmlExport(source);
