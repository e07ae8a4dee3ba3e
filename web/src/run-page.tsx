import { Fragment } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import {
  type GroupCost,
  type GroupSummary,
  getJson,
  getPrefetched,
  isLive,
  type ProgressRow,
  postJson,
  prefetch,
} from './api.js';
import { Cost, Loading, PassRate, Progress } from './bits.js';
import { type CaseFilters, CaseTable, casesPath } from './case-table.js';
import { count, duration, pct, q, tone, when } from './format.js';
import { Matrix } from './matrix.js';
import { navigate } from './router.js';

interface RunDetail {
  summary: GroupSummary;
  progress: ProgressRow[];
  facets: { targets: string[]; evals: string[]; errorKinds: string[] };
  cursor: string;
}

const filterNames = ['outcome', 'target', 'eval', 'error_kind', 'q'] as const;

const perTarget = (rows: ProgressRow[]) => {
  const by = new Map<string, Record<string, number>>();
  for (const r of rows) {
    const t = by.get(r.target ?? '–') ?? {};
    by.set(r.target ?? '–', t);
    const k = r.outcome ?? r.status.toLowerCase();
    t[k] = (t[k] ?? 0) + r.count;
    t.total = (t.total ?? 0) + r.count;
  }
  return [...by].sort(([a], [b]) => (a < b ? -1 : 1));
};

export const RunPage = ({ group, query }: { group: string; query: URLSearchParams }) => {
  const [detail, setDetail] = useState<RunDetail | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [version, setVersion] = useState(0);
  const [canceling, setCanceling] = useState(false);
  const [cost, setCost] = useState<GroupCost | null>(null);
  const filters: CaseFilters = Object.fromEntries(
    filterNames.flatMap((n) => (query.get(n) ? [[n, query.get(n)]] : [])),
  );
  const [text, setText] = useState(filters.q ?? '');
  const detailPath = `/runs/${encodeURIComponent(group)}`;
  // Both first reads start while this page first renders, before any effect runs (the table's comes first).
  useState(() => {
    prefetch(casesPath(group, filters, 0));
    prefetch(detailPath);
  });

  useEffect(() => {
    let events: EventSource | undefined;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const show = (d: RunDetail) => {
      setDetail(d);
      // Asked for after the counts: summing the spend reads every row, so it must not delay the first rows.
      getJson<GroupCost>(`${detailPath}/cost`).then(setCost, () => {});
      return d;
    };
    const refresh = () => getJson<RunDetail>(detailPath).then(show);
    getPrefetched<RunDetail>(detailPath)
      .then(show)
      .then(
        (first) => {
          // A finished run never changes again: only a live one is followed.
          if (!isLive(first.summary)) return;
          // Progress comes from the store as it changes; commits after the ones just read are coalesced into one
          // reload. The browser resumes from the last result id by itself when the stream drops.
          events = new EventSource(
            `/api/v1/events?group=${encodeURIComponent(group)}&after=${encodeURIComponent(first.cursor)}`,
          );
          const soon = () => {
            timer ??= setTimeout(() => {
              timer = undefined;
              refresh();
              setVersion((v) => v + 1);
            }, 300);
          };
          events.addEventListener('progress', soon);
          events.addEventListener('result', soon);
        },
        (e: Error) => setError(e.message),
      );
    return () => {
      events?.close();
      if (timer) clearTimeout(timer);
    };
  }, [group]);

  const setFilter = (name: string, value: string) => {
    const next = new URLSearchParams(query);
    if (value) next.set(name, value);
    else next.delete(name);
    navigate(`/runs/${encodeURIComponent(group)}${q(Object.fromEntries(next))}`, true);
  };
  const cancel = async () => {
    setCanceling(true);
    try {
      await postJson(`/runs/${encodeURIComponent(group)}/cancel`, {});
    } catch (e) {
      setError((e as Error).message);
    }
  };
  const header = ({ summary: g, progress }: RunDetail) => (
    <>
      <div class="toolbar">
        <h1>
          <span class="muted">Run</span> <span class="mono">{g.groupId}</span>
        </h1>
        {isLive(g) && (
          <button type="button" class="danger" disabled={canceling} onClick={cancel}>
            {canceling ? 'Canceling…' : 'Cancel run'}
          </button>
        )}
      </div>
      {error && <p class="error-box">{error}</p>}
      <div class="cards">
        <div class="card">
          <div class="label">Progress</div>
          <Progress g={g} />
        </div>
        <div class="card">
          <div class="label">Pass rate</div>
          <div class="big">
            <PassRate g={g} />
          </div>
        </div>
        <div class="card">
          <div class="label">Outcomes</div>
          <div class="counts">
            <span class={tone(g.passed, 'pass')}>{count(g.passed)} passed</span>{' '}
            <span class={tone(g.failed, 'fail')}>{count(g.failed)} failed</span>{' '}
            <span class={tone(g.error + g.failedRuns, 'err')}>{count(g.error + g.failedRuns)} error</span>{' '}
            <span class={tone(g.canceled, '')}>{count(g.canceled)} canceled</span>
          </div>
        </div>
        <div class="card">
          <div class="label">Cost · target | judge</div>
          <div data-testid="cost">
            <Cost cost={cost} />
          </div>
        </div>
        <div class="card">
          <div class="label">Started · duration</div>
          <div>
            {when(g.startedAt ?? g.createdAt)} · {duration(g.startedAt ?? g.createdAt, isLive(g) ? null : g.finishedAt)}
          </div>
        </div>
      </div>
      <h2>Targets</h2>
      <table class="grid compact" data-testid="targets">
        <thead>
          <tr>
            <th>Target</th>
            <th class="num">Cases</th>
            <th class="num">Passed</th>
            <th class="num">Failed</th>
            <th class="num">Error</th>
            <th class="num">Canceled</th>
            <th class="num">Waiting</th>
            <th class="num">Pass rate</th>
          </tr>
        </thead>
        <tbody>
          {perTarget(progress).map(([t, c]) => (
            <tr key={t}>
              <td>{t}</td>
              <td class="num">{count(c.total ?? 0)}</td>
              <td class={`num ${tone(c.passed ?? 0, 'pass')}`}>{count(c.passed ?? 0)}</td>
              <td class={`num ${tone(c.failed ?? 0, 'fail')}`}>{count(c.failed ?? 0)}</td>
              <td class={`num ${tone(c.error ?? 0, 'err')}`}>{count(c.error ?? 0)}</td>
              <td class={`num ${tone(c.canceled ?? 0, '')}`}>{count(c.canceled ?? 0)}</td>
              <td class={`num ${tone((c.queued ?? 0) + (c.running ?? 0), '')}`}>
                {count((c.queued ?? 0) + (c.running ?? 0))}
              </td>
              <td class="num">{pct(c.passed ?? 0, (c.passed ?? 0) + (c.failed ?? 0) + (c.error ?? 0))}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
  const controls = (facets: RunDetail['facets']) => (
    <>
      <Matrix group={group} version={version} />
      <h2>Cases</h2>
      <div class="filters">
        <select
          value={filters.outcome ?? ''}
          onChange={(e) => setFilter('outcome', e.currentTarget.value)}
          aria-label="outcome"
        >
          <option value="">any outcome</option>
          {['passed', 'failed', 'error', 'canceled'].map((o) => (
            <option key={o}>{o}</option>
          ))}
        </select>
        <Choice name="target" label="any target" values={facets.targets} value={filters.target} set={setFilter} />
        <Choice name="eval" label="any eval" values={facets.evals} value={filters.eval} set={setFilter} />
        <Choice
          name="error_kind"
          label="any error"
          values={facets.errorKinds}
          value={filters.error_kind}
          set={setFilter}
        />
        <form
          onSubmit={(e) => {
            e.preventDefault();
            setFilter('q', text);
          }}
        >
          <input
            placeholder="Search output, transcript, row…"
            value={text}
            onInput={(e) => setText(e.currentTarget.value)}
          />
        </form>
      </div>
    </>
  );
  return (
    <section>
      {detail ? header(detail) : <Loading error={error} />}
      {detail?.summary.kind === 'task' ? (
        <TaskRuns group={group} version={version} />
      ) : (
        // Keyed: unkeyed, Preact would hand this fragment to the header when it replaces "Loading…", and mount
        // the table (and fetch its first page) a second time.
        <Fragment key="cases">
          {detail && controls(detail.facets)}
          {/* Mounted at once, not after the header: the first page is fetched alongside the counts. */}
          <CaseTable group={group} filters={filters} version={version} />
        </Fragment>
      )}
      <p class="muted">
        <a href={`/compare?head=${encodeURIComponent(group)}`}>compare with another run</a>
      </p>
    </section>
  );
};

const Choice = (p: {
  name: string;
  label: string;
  values: string[];
  value?: string;
  set: (n: string, v: string) => void;
}) => (
  <select value={p.value ?? ''} onChange={(e) => p.set(p.name, e.currentTarget.value)} aria-label={p.name}>
    <option value="">{p.label}</option>
    {p.values.map((v) => (
      <option key={v}>{v}</option>
    ))}
  </select>
);

interface TaskRunRow {
  runId: string;
  status: string;
  createdAt: number;
  startedAt: number | null;
  finishedAt: number | null;
  error: { kind: string; message: string } | null;
}

const TaskRuns = ({ group, version }: { group: string; version: number }) => {
  const [runs, setRuns] = useState<TaskRunRow[] | null>(null);
  useEffect(() => {
    getJson<{ runs: TaskRunRow[] }>(`/runs/${encodeURIComponent(group)}/runs`).then((r) => setRuns(r.runs));
  }, [group, version]);
  if (!runs) return <Loading />;
  return (
    <>
      <h2>Task runs</h2>
      <table class="grid compact">
        <thead>
          <tr>
            <th>Run</th>
            <th>Status</th>
            <th>Started</th>
            <th class="num">Duration</th>
            <th>Error</th>
          </tr>
        </thead>
        <tbody>
          {runs.map((r) => (
            <tr key={r.runId}>
              <td class="mono">
                <a href={`/tasks/${encodeURIComponent(r.runId)}`}>{r.runId}</a>
              </td>
              <td>
                <span class={`badge ${r.status.toLowerCase()}`}>{r.status}</span>
              </td>
              <td>{when(r.startedAt)}</td>
              <td class="num">{duration(r.startedAt, r.finishedAt)}</td>
              <td>{r.error ? `${r.error.kind}: ${r.error.message}` : ''}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
};
