import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { writeFileAtomic } from '../bundle/atomic.js';
import { ProctorError } from '../errors.js';
import { extended } from '../extended.js';
import type { Json, JsonObject } from '../records.js';
import { stableJson } from '../stable-json.js';

/** `--cassette`: replay strictly, record what runs, record only what is missing, or neither. */
export const cassetteModes = ['replay', 'record', 'record-missing', 'off'] as const;
export type CassetteMode = (typeof cassetteModes)[number];

/** One recorded model call. `request` holds what decides the reply and nothing else: no header, no secret. */
export interface CassetteEntry {
  key: string;
  /** The n-th identical request within the case (0-based): an agent loop's repeated calls stay distinct. */
  ordinal: number;
  request: JsonObject;
  response: JsonObject;
  latency_ms: number;
  recorded_at: string;
}

/** What a call through a cassette gives back: the reply, how long the original call took, and whether replayed. */
export interface CassetteReply {
  response: JsonObject;
  latencyMs: number;
  replayed: boolean;
}

/** The key of a request (its stable JSON, computed once per call) and its ordinal among identical requests. */
const keyOf = (requestJson: string, ordinal: number): string =>
  createHash('sha256').update(`${requestJson}\n${ordinal}`).digest('hex').slice(0, 32);

/** Every leaf of a JSON value by its path (`messages[0].content`), as stable text: for a miss's nearest diff. */
const leaves = (value: Json, path: string, out: Map<string, string>): Map<string, string> => {
  if (value !== null && typeof value === 'object') {
    const entries = Array.isArray(value) ? value.map((v, i) => [`[${i}]`, v] as const) : Object.entries(value);
    if (entries.length === 0) out.set(path, stableJson(value));
    for (const [k, v] of entries)
      leaves(v as Json, Array.isArray(value) ? `${path}${k}` : path ? `${path}.${k}` : k, out);
    return out;
  }
  out.set(path, stableJson(value));
  return out;
};

const clip = (text: string | undefined): string =>
  text === undefined ? '(absent)' : text.length > 80 ? `${text.slice(0, 79)}…` : text;

/** The recorded request nearest to `request` (fewest differing leaves), described by its first differences. */
const nearestDifference = (request: JsonObject, entries: readonly CassetteEntry[]): string => {
  const wanted = leaves(request, '', new Map());
  let best: { diffs: string[]; count: number } | undefined;
  for (const entry of entries) {
    const recorded = leaves(entry.request, '', new Map());
    const paths = new Set([...wanted.keys(), ...recorded.keys()]);
    const diffs = [...paths].filter((p) => wanted.get(p) !== recorded.get(p));
    if (!best || diffs.length < best.count) {
      best = {
        count: diffs.length,
        diffs: diffs.slice(0, 3).map((p) => `${p}: recorded ${clip(recorded.get(p))}, now ${clip(wanted.get(p))}`),
      };
    }
  }
  if (!best) return 'nothing is recorded for this case';
  if (best.count === 0) return 'the same request is recorded fewer times than this case now makes it';
  return `the nearest recorded request differs at ${best.diffs.join('; ')}`;
};

/**
 * The model calls of one case, in a file of its own (`cassettes/<eval>/<case key>.jsonl`): reviewable in a
 * diff, and never written by two cases at once. Entries are keyed by the request and its ordinal among
 * identical requests of the case, never by global order, so replay agrees at any concurrency.
 */
export class CaseCassette {
  private entries: CassetteEntry[] | undefined;
  private readonly ordinals = new Map<string, number>();

  constructor(
    readonly file: string,
    readonly mode: CassetteMode,
    /** How messages name the file (project-relative); default the path itself. */
    private readonly shownAs: string = file,
  ) {}

  private load(): CassetteEntry[] {
    this.entries ??= existsSync(this.file)
      ? readFileSync(this.file, 'utf8')
          .split('\n')
          .filter((line) => line.trim() !== '')
          .map((line) => JSON.parse(line) as CassetteEntry)
      : [];
    return this.entries;
  }

  /** Answers `request` from the cassette, or by `live` (recording it), as the mode says. */
  async call(
    request: JsonObject,
    live: () => Promise<{ response: JsonObject; latencyMs: number }>,
  ): Promise<CassetteReply> {
    if (this.mode === 'off') return { ...(await live()), replayed: false };
    const base = stableJson(request);
    const ordinal = this.ordinals.get(base) ?? 0;
    this.ordinals.set(base, ordinal + 1);
    const key = keyOf(base, ordinal);
    const recorded = this.mode === 'record' ? undefined : this.load().find((e) => e.key === key);
    if (recorded) return { response: recorded.response, latencyMs: recorded.latency_ms, replayed: true };
    if (this.mode === 'replay') {
      throw new ProctorError(
        'cassette_miss',
        `no recorded reply in ${this.shownAs} for this request: ${nearestDifference(request, this.load())}; ` +
          'record it with --cassette record-missing (or record)',
      );
    }
    const reply = await live();
    this.save({
      key,
      ordinal,
      request,
      response: reply.response,
      latency_ms: Math.round(reply.latencyMs),
      recorded_at: new Date().toISOString(),
    });
    return extended(reply, { replayed: false });
  }

  /** Adds or replaces the entry of its key and rewrites the file whole (a crash leaves the old one). */
  private save(entry: CassetteEntry): void {
    const entries = this.load().filter((e) => e.key !== entry.key);
    entries.push(entry);
    this.entries = entries;
    mkdirSync(dirname(this.file), { recursive: true });
    writeFileAtomic(this.file, entries.map((e) => `${JSON.stringify(e)}\n`).join(''));
  }
}
