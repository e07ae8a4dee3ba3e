export const pct = (n: number, d: number): string => (d === 0 ? '–' : `${((n / d) * 100).toFixed(1)}%`);

export const when = (ms: number | null): string => (ms === null ? '–' : new Date(ms).toLocaleString());

export const duration = (from: number | null, to: number | null): string => {
  if (from === null) return '–';
  const s = Math.max(0, ((to ?? Date.now()) - from) / 1000);
  if (s < 60) return `${s.toFixed(1)} s`;
  if (s < 3600) return `${Math.floor(s / 60)} m ${Math.round(s % 60)} s`;
  return `${Math.floor(s / 3600)} h ${Math.round((s % 3600) / 60)} m`;
};

export const score = (s: number | null | undefined): string => (s === null || s === undefined ? '' : s.toFixed(2));

export const q = (params: Record<string, string | undefined>): string => {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v) p.set(k, v);
  const s = p.toString();
  return s ? `?${s}` : '';
};

/** Dollars with enough digits that a cheap run is not shown as $0.00; null (no price known) as a dash. */
export const usd = (n: number | null): string => {
  if (n === null) return '–';
  if (n === 0) return '$0';
  return n < 0.01 ? `$${n.toPrecision(2)}` : `$${n.toFixed(2)}`;
};

/** A count with thousands separators. */
export const count = (n: number): string => n.toLocaleString('en');

/** A count's colour class: its tone when there are some, muted when none (a column of red zeros alarms). */
export const tone = (n: number, cls: string): string => (n ? cls : 'zero');
