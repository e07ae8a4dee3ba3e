import type { StepSpec } from '../engine/task.js';
import type { SourcePosition } from '../errors.js';
import type { JsonObject } from '../records.js';
import type { AssertionSpec, TestSpec } from './spec.js';

/** Reads a held test again, whole: drafted and finished from its line as when its eval was loaded. */
export interface HeldTestSource {
  test(id: string, offset: number, bytes: number, index: number): TestSpec;
}

/**
 * A test of a JSONL file as a plan holds it: its id (what identity and selection read) and its line's place in
 * the file. Its vars, assertions and steps are read from that line again when used, so a 100,000-test plan does
 * not hold them all; the source keeps the last test it read, as a case reads its test's fields one after another.
 */
export class HeldTest implements TestSpec {
  constructor(
    readonly id: string,
    /** Kept for `--filter-pattern`, which reads it for every test. */
    readonly description: string | undefined,
    private readonly offset: number,
    private readonly bytes: number,
    private readonly index: number,
    private readonly source: HeldTestSource,
  ) {}

  /** The test read back whole: one read where several of its fields are used. */
  get whole(): TestSpec {
    return this.source.test(this.id, this.offset, this.bytes, this.index);
  }

  get vars(): JsonObject {
    return this.whole.vars;
  }

  get assert(): AssertionSpec[] {
    return this.whole.assert;
  }

  get threshold(): number {
    return this.whole.threshold;
  }

  get repeat(): number {
    return this.whole.repeat;
  }

  get metadata(): JsonObject | undefined {
    return this.whole.metadata;
  }

  get where(): SourcePosition | undefined {
    return this.whole.where;
  }

  get before(): StepSpec[] | undefined {
    return this.whole.before;
  }

  get after(): StepSpec[] | undefined {
    return this.whole.after;
  }
}
