// The one place the front end talks to the server: JSON reads, and mutations carrying the CSRF token.
const csrf = (): string => document.querySelector('meta[name="proctor-csrf"]')?.getAttribute('content') ?? '';

export const getJson = async <T>(path: string): Promise<T> => {
  const res = await fetch(`/api/v1${path}`, { headers: { Accept: 'application/json' } });
  const body = (await res.json()) as T & { error?: string };
  if (!res.ok) throw new Error(body.error ?? `${res.status}`);
  return body;
};

const early = new Map<string, Promise<unknown>>();

/** Starts a read that a component mounted later takes over: a table's first page, fetched with its header. */
export const prefetch = (path: string): void => {
  early.set(path, getJson(path));
};

export const getPrefetched = <T>(path: string): Promise<T> => {
  const started = early.get(path) as Promise<T> | undefined;
  early.delete(path);
  return started ?? getJson<T>(path);
};

export const postJson = async <T>(path: string, data: unknown): Promise<T> => {
  const res = await fetch(`/api/v1${path}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-Proctor-CSRF': csrf() },
    body: JSON.stringify(data),
  });
  const body = (await res.json()) as T & { error?: string };
  if (!res.ok) throw new Error(body.error ?? `${res.status}`);
  return body;
};

export interface GroupSummary {
  groupId: string;
  kind: 'eval' | 'task';
  total: number;
  queued: number;
  running: number;
  passed: number;
  failed: number;
  error: number;
  canceled: number;
  completed: number;
  failedRuns: number;
  targets: string[];
  createdAt: number;
  startedAt: number | null;
  finishedAt: number | null;
}

export interface ProgressRow {
  target: string | null;
  status: string;
  outcome: string | null;
  count: number;
}

export interface CaseRow {
  seq: number;
  runId: string;
  caseKey: string;
  attempt: number;
  target: string;
  evalPath: string;
  outcome: string;
  score: number | null;
  errorKind: string | null;
  row: {
    identity?: { eval: string; test: string; prompt: string; target: string; sample: number };
    duration_ms?: number;
    error?: { kind: string; message: string } | null;
  };
}

export interface Clipped {
  text: string;
  length: number;
  truncated: boolean;
}

export const finished = (g: GroupSummary): number => g.total - g.queued - g.running;
export const isLive = (g: GroupSummary): boolean => g.queued + g.running > 0;
