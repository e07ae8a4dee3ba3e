import { useEffect, useRef, useState } from 'preact/hooks';
import { type CaseRow, getPrefetched } from './api.js';
import { Outcome } from './bits.js';
import { q, score } from './format.js';

export interface CaseFilters {
  outcome?: string;
  target?: string;
  eval?: string;
  error_kind?: string;
  q?: string;
}

const rowHeight = 30;
const pageSize = 200;
// Pages kept in memory (≤ 5,000 rows); the DOM holds only the rows in view.
const keptPages = 25;
const overscan = 8;
const scrollRestMs = 60;

export const casesPath = (group: string, filters: CaseFilters, page: number): string =>
  `/runs/${encodeURIComponent(group)}/cases${q({ ...filters, offset: String(page * pageSize), limit: String(pageSize) })}`;

interface Page {
  total: number;
  rows: CaseRow[];
}

/** A server-paged, virtualised table of a run's cases: only the visible rows exist, pages load as they scroll in. */
export const CaseTable = ({ group, filters, version }: { group: string; filters: CaseFilters; version: number }) => {
  const box = useRef<HTMLDivElement>(null);
  const pages = useRef(new Map<number, CaseRow[]>());
  const loading = useRef(new Set<number>());
  const [total, setTotal] = useState<number | null>(null);
  const [, setTick] = useState(0);
  const [view, setView] = useState({ top: 0, height: 600 });
  const key = JSON.stringify(filters);

  const load = (page: number, fresh = false) => {
    if (!fresh && (pages.current.has(page) || loading.current.has(page))) return;
    loading.current.add(page);
    getPrefetched<Page>(casesPath(group, filters, page))
      .then((p) => {
        pages.current.delete(page);
        pages.current.set(page, p.rows);
        while (pages.current.size > keptPages) pages.current.delete(pages.current.keys().next().value as number);
        setTotal(p.total);
        setTick((t) => t + 1);
      })
      .finally(() => loading.current.delete(page));
  };

  useEffect(() => {
    pages.current.clear();
    setTotal(null);
    if (box.current) box.current.scrollTop = 0;
    load(0, true);
  }, [group, key]);

  useEffect(() => {
    if (version === 0) return;
    const first = Math.floor(view.top / rowHeight / pageSize);
    const last = Math.floor((view.top + view.height) / rowHeight / pageSize);
    for (let p = first; p <= last; p++) load(p, true);
  }, [version]);

  const first = Math.max(0, Math.floor(view.top / rowHeight) - overscan);
  const count = total ?? 0;
  const last = Math.min(count, Math.ceil((view.top + view.height) / rowHeight) + overscan);
  // Pages load once scrolling rests: an End or a fling passes thousands of rows nobody looks at.
  useEffect(() => {
    const timer = setTimeout(() => {
      for (let p = Math.floor(first / pageSize); p <= Math.floor(Math.max(first, last - 1) / pageSize); p++)
        if (p * pageSize < count) load(p);
    }, scrollRestMs);
    return () => clearTimeout(timer);
  });

  const rows = [];
  for (let i = first; i < last; i++) {
    const r = pages.current.get(Math.floor(i / pageSize))?.[i % pageSize];
    const at = { transform: `translateY(${i * rowHeight}px)` };
    if (!r) {
      rows.push(<div key={i} class="vt-row placeholder" style={at} />);
      continue;
    }
    const id = r.row.identity;
    const href = `/runs/${encodeURIComponent(group)}/cases/${encodeURIComponent(r.caseKey)}`;
    rows.push(
      <div key={i} class={`vt-row ${r.outcome}`} data-key={r.caseKey} data-index={i} style={at}>
        <span class="num muted">{i + 1}</span>
        <span>
          <Outcome value={r.outcome} />
        </span>
        <span class="mono" title={id?.test}>
          <a href={href}>{id?.test ?? r.caseKey}</a>
        </span>
        <span title={r.target}>{r.target}</span>
        <span class="mono muted" title={r.evalPath}>
          {r.evalPath}
        </span>
        <span class="num">{score(r.score)}</span>
        <span class="muted" title={r.row.error?.message}>
          {r.errorKind ?? ''}
        </span>
        <span class="num muted">{r.row.duration_ms === undefined ? '' : `${r.row.duration_ms} ms`}</span>
        <span class="mono muted">{r.caseKey}</span>
      </div>,
    );
  }

  return (
    <div class="vt">
      <div class="vt-head">
        <span class="num">#</span>
        <span>Outcome</span>
        <span>Test</span>
        <span>Target</span>
        <span>Eval</span>
        <span class="num">Score</span>
        <span>Error</span>
        <span class="num">Duration</span>
        <span>Key</span>
      </div>
      <div
        class="vt-body"
        ref={box}
        // biome-ignore lint/a11y/noNoninteractiveTabindex: focusable so End, Home and PageDown scroll the table
        tabIndex={0}
        data-testid="case-table"
        onScroll={(e) => setView({ top: e.currentTarget.scrollTop, height: e.currentTarget.clientHeight })}
      >
        <div class="vt-space" style={{ height: `${count * rowHeight}px` }}>
          {rows}
        </div>
      </div>
      <div class="vt-foot muted" data-testid="case-count">
        {total === null ? 'loading…' : `${total.toLocaleString('en')} cases`}
      </div>
    </div>
  );
};
