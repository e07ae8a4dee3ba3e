import type { Counts, Progress } from '../api/follow.js';

const seconds = (ms: number): string =>
  ms >= 3_600_000
    ? `${Math.floor(ms / 3_600_000)}h${Math.round((ms % 3_600_000) / 60_000)}m`
    : ms >= 60_000
      ? `${Math.floor(ms / 60_000)}m${Math.round((ms % 60_000) / 1000)}s`
      : `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)}s`;

const countsText = (c: Counts): string =>
  `${c.passed} passed · ${c.failed} failed · ${c.error} errors${c.canceled ? ` · ${c.canceled} canceled` : ''}`;

const progressLine = (p: Progress): string => {
  const rate = p.elapsedMs > 0 ? (p.done * 1000) / p.elapsedMs : 0;
  const eta = rate > 0 && p.done < p.total ? ` · ETA ${seconds(((p.total - p.done) / rate) * 1000)}` : '';
  return `${p.done}/${p.total} · ${countsText(p)} · ${rate.toFixed(1)}/s${eta}${pausedText(p)}`;
};

/** Targets held back after a 429 where the runs execute: this process (local runner) or the pool's workers. */
const pausedText = (p: Progress): string =>
  (p.rateLimited ?? [])
    .map(({ label, until }) => ` · ⏸ rate-limited by ${label}, resuming in ${seconds(until - Date.now())}`)
    .join('');

/** Live progress: a redrawn block on a terminal, a plain line every few seconds otherwise. */
export class ProgressDisplay {
  private drawnLines = 0;
  private lastPlainAt = 0;
  private lastPlain = '';

  constructor(
    private readonly out: NodeJS.WriteStream,
    private readonly quiet: boolean,
    private readonly plainEveryMs = 2000,
  ) {}

  /** A terminal redraws at every reading; plain output wants one every few seconds; --quiet none. */
  wantsUpdate(): boolean {
    if (this.quiet) return false;
    return this.out.isTTY || Date.now() - this.lastPlainAt >= this.plainEveryMs;
  }

  update(p: Progress): void {
    if (this.quiet) return;
    if (this.out.isTTY) {
      this.redraw(p);
      return;
    }
    const line = progressLine(p);
    const now = Date.now();
    if (line !== this.lastPlain && (now - this.lastPlainAt >= this.plainEveryMs || p.done === p.total)) {
      this.out.write(`${line}\n`);
      this.lastPlain = line;
      this.lastPlainAt = now;
    }
  }

  private redraw(p: Progress): void {
    const width = Math.max(...[...p.byTarget.keys()].map((t) => t.length), 6);
    const lines = [
      progressLine(p),
      ...[...p.byTarget.entries()].map(
        ([target, c]) => `  ${target.padEnd(width)}  ${c.done}/${c.total}  ${countsText(c)}  (${c.running} running)`,
      ),
    ];
    const up = this.drawnLines > 0 ? `\x1b[${this.drawnLines}A\x1b[0J` : '';
    this.out.write(`${up}${lines.join('\n')}\n`);
    this.drawnLines = lines.length;
  }
}
