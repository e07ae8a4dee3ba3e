import { createHash } from 'node:crypto';
import { z } from 'zod';
import { CanceledError, ProctorError } from '../errors.js';
import { sleep } from '../sleep.js';

/** How one endpoint's in-flight limit moves: additive increase, multiplicative decrease (AIMD). */
export interface RateSettings {
  min: number;
  max: number;
  start: number;
  /** Factor applied to the limit once per 429 episode. */
  decrease: number;
  /** The pause after a 429 when the server names no Retry-After (ms). */
  cooldownMs: number;
  /** Longest a call may wait on rate limits in total before it fails as rate_limited (ms). */
  maxWaitMs: number;
  /** False: a 429 still cuts the limit, but the call fails as rate_limited at once, for `--retries` to decide. */
  retry429: boolean;
}

// A run starts at the width it asks for (up to 64 calls to an endpoint at once), as promptfoo's and Inspect's do:
// from 8, a 5,000-case run at -j 50 spent its first three rounds of calls below 50 (~90 ms more at 50 ms a call,
// ~4 s at 2 s). No bound above: the run's max concurrency and a target's max_concurrency are the bounds a user set,
// and the limit grows past 64 only while its calls fill it.
export const defaultRateSettings: RateSettings = {
  min: 1,
  max: Number.POSITIVE_INFINITY,
  start: 64,
  decrease: 0.5,
  cooldownMs: 1000,
  maxWaitMs: 10 * 60 * 1000,
  retry429: true,
};

/**
 * `rate = { … }` of a model or http target: its endpoint's AIMD settings, each defaulting to
 * defaultRateSettings. Targets that share an endpoint and key share one gate, set by the first one used.
 */
export const rateConfig = z
  .strictObject({
    min: z.int().positive().optional(),
    max: z.int().positive().optional(),
    start: z.int().positive().optional(),
    decrease: z.number().gt(0).lt(1).optional(),
    cooldown_s: z.number().positive().optional(),
    max_wait_s: z.number().positive().optional(),
    retry_429: z.boolean().optional(),
  })
  .refine((r) => (r.min ?? defaultRateSettings.min) <= (r.max ?? defaultRateSettings.max), {
    message: 'min must not be above max',
  });

export const rateSettingsOf = (rate: z.output<typeof rateConfig> | undefined): RateSettings => {
  const d = defaultRateSettings;
  return {
    min: rate?.min ?? d.min,
    max: rate?.max ?? d.max,
    start: rate?.start ?? d.start,
    decrease: rate?.decrease ?? d.decrease,
    cooldownMs: rate?.cooldown_s === undefined ? d.cooldownMs : rate.cooldown_s * 1000,
    maxWaitMs: rate?.max_wait_s === undefined ? d.maxWaitMs : rate.max_wait_s * 1000,
    retry429: rate?.retry_429 ?? d.retry429,
  };
};

/** A limit change, kept for the progress display and tests: why, from what, to what. */
export interface RateEvent {
  at: number;
  from: number;
  to: number;
  reason: 'rate_limit' | 'grow';
}

/**
 * The in-flight limit of one endpoint and key in this process. A 429 cuts it once per episode (a call started
 * before the cut, however late its answer, 429s for the same overload) and pauses new calls until the server's
 * Retry-After; calls started since the cut that succeed while the limit is nearly used grow it: doubling until the
 * first cut, then by one per round of `limit` calls.
 */
export class RateGate {
  limit: number;
  private inFlight = 0;
  private readonly waiting: (() => void)[] = [];
  private pausedUntil = 0;
  /** Bumped by each cut: a call started before the last cut belongs to the episode that caused it. */
  private generation = 0;
  private slowStart = true;
  private successes = 0;
  readonly history: RateEvent[] = [];

  constructor(
    readonly settings: RateSettings,
    /** The target label the progress display names it by (the first target that used the endpoint). */
    readonly label: string,
  ) {
    this.limit = Math.max(settings.min, Math.min(settings.start, settings.max));
  }

  /** Until when new calls are held back after a 429 (epoch ms), or 0. */
  get rateLimitedUntil(): number {
    return this.pausedUntil > Date.now() ? this.pausedUntil : 0;
  }

  private async acquire(signal: AbortSignal): Promise<void> {
    for (;;) {
      const pause = this.pausedUntil - Date.now();
      if (pause > 0) await sleep(pause, signal);
      else if (this.inFlight < this.limit) {
        this.inFlight++;
        return;
      } else await this.wait(signal);
      if (signal.aborted) throw new CanceledError();
    }
  }

  private wait(signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        signal.removeEventListener('abort', done);
        resolve();
      };
      signal.addEventListener('abort', done, { once: true });
      this.waiting.push(done);
    });
  }

  private release(): void {
    this.inFlight--;
    this.waiting.shift()?.();
  }

  private change(to: number, reason: RateEvent['reason']): void {
    if (to === this.limit) return;
    this.history.push({ at: Date.now(), from: this.limit, to, reason });
    if (this.history.length > 200) this.history.shift();
    this.limit = to;
    // A raised limit lets more waiters in at once.
    for (let i = this.inFlight; i < to && this.waiting.length; i++) this.waiting.shift()?.();
  }

  private succeeded(saturated: boolean, generation: number): void {
    // A call started before the last cut says nothing about the limit since.
    if (!saturated || generation < this.generation) return;
    this.successes++;
    if (this.successes < Math.max(this.limit, 4)) return;
    this.successes = 0;
    const next = this.slowStart ? this.limit * 2 : this.limit + Math.max(1, Math.floor(this.limit * 0.05));
    this.change(Math.min(this.settings.max, next), 'grow');
  }

  private rateLimited(retryAfterMs: number | undefined, generation: number): void {
    this.pausedUntil = Math.max(this.pausedUntil, Date.now() + (retryAfterMs ?? this.settings.cooldownMs));
    this.successes = 0;
    // The calls in flight when the limit was cut 429 for the same overload: one cut per episode.
    if (generation < this.generation) return;
    this.generation++;
    this.slowStart = false;
    this.change(Math.max(this.settings.min, Math.floor(this.limit * this.settings.decrease)), 'rate_limit');
  }

  /**
   * Runs `call` inside the limit. A rate_limited error waits and tries again without counting as a retry of
   * the case, up to `maxWaitMs` in all; any other outcome is the call's.
   */
  async run<T>(signal: AbortSignal, call: () => Promise<T>): Promise<T> {
    const started = Date.now();
    for (;;) {
      await this.acquire(signal);
      const saturated = this.inFlight >= this.limit * 0.8;
      const generation = this.generation;
      try {
        const result = await call();
        this.succeeded(saturated, generation);
        return result;
      } catch (error) {
        if (!(error instanceof ProctorError && error.kind === 'rate_limited')) throw error;
        this.rateLimited(error.detail.retryAfterMs, generation);
        if (!this.settings.retry429 || Date.now() - started > this.settings.maxWaitMs) throw error;
      } finally {
        this.release();
      }
    }
  }
}

const gates = new Map<string, RateGate>();

/** The gate of one endpoint + key (+ model, + role: a judge's limit is its own), shared by the whole process. */
export const rateGate = (
  parts: { kind: string; url: string; apiKey?: string | undefined; model?: string; role: string; label: string },
  settings: RateSettings = defaultRateSettings,
): RateGate => {
  // The key is hashed: gates outlive the call, and a key never sits in memory longer than its target.
  const keyHash = parts.apiKey ? createHash('sha256').update(parts.apiKey).digest('hex').slice(0, 8) : '';
  const id = [parts.kind, parts.url, keyHash, parts.model ?? '', parts.role].join('|');
  let gate = gates.get(id);
  if (!gate) {
    gate = new RateGate(settings, parts.label);
    gates.set(id, gate);
  }
  return gate;
};

/** The gates of this process holding calls back after a 429 now, for the progress display. */
export const rateLimitedNow = (): { label: string; until: number }[] =>
  [...gates.values()].filter((g) => g.rateLimitedUntil > 0).map((g) => ({ label: g.label, until: g.rateLimitedUntil }));
