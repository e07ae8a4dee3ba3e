import { z } from 'zod';
import { InputError } from '../errors.js';
import type { GradeResult, Grader, GraderContext, GraderDef } from './grader.js';
import { type GraderKind, graderKinds, graders, isGraderKind } from './registry.js';

/** The keys every assertion has, whatever its kind; the rest of an assertion is the kind's own config. */
export const assertionCommonSchema = z.object({
  type: z.string().min(1),
  weight: z.number().min(0).default(1),
  required: z.boolean().default(false),
  id: z.string().min(1).optional(),
  threshold: z.number().min(0).max(1).optional(),
});

const commonKeys: ReadonlySet<string> = new Set(Object.keys(assertionCommonSchema.shape));

/** `not-contains` → contains, negated. Undefined for a type no grader has. */
export const parseAssertionType = (type: string): { kind: GraderKind; negate: boolean } | undefined => {
  if (isGraderKind(type)) return { kind: type, negate: false };
  const negated = type.startsWith('not-') ? type.slice(4) : undefined;
  return negated !== undefined && isGraderKind(negated) ? { kind: negated, negate: true } : undefined;
};

/** The config keys of a kind that its grader renders at grading time (see GraderDef.gradingTemplates). */
export const gradingTemplateKeys = (kind: string): readonly string[] => {
  if (!isGraderKind(kind)) return [];
  const def: GraderDef = graders[kind];
  return def.gradingTemplates ?? [];
};

/** A kind whose graders are made per grading, not kept (GraderDef.cheap). */
export const isCheapKind = (kind: GraderKind): boolean => (graders[kind] as GraderDef).cheap === true;

/** The zod schema of a kind's own keys, for validating an eval file without creating graders. */
export const assertionConfigSchema = (kind: GraderKind): z.ZodType => graders[kind].config();

/** JSON Schema of each kind's own keys, as an editor sees them (input side: defaults optional). */
export const graderConfigJsonSchemas = (): Record<GraderKind, Record<string, unknown>> =>
  Object.fromEntries(
    graderKinds.map((kind) => [
      kind,
      z.toJSONSchema(graders[kind].config(), { io: 'input' }) as Record<string, unknown>,
    ]),
  ) as Record<GraderKind, Record<string, unknown>>;

/** One assertion ready to grade: what scoreCase needs plus the grader. */
export interface CreatedAssertion {
  id: string;
  weight: number;
  required: boolean;
  grade: Grader;
}

/** An assertion already split by the plan layer: kind without `not-`, its own keys in `config`. */
export interface ResolvedAssertion {
  kind: GraderKind;
  negate: boolean;
  weight: number;
  required: boolean;
  id?: string;
  threshold?: number;
  config: Record<string, unknown>;
}

// Weighted means of decimal weights land a hair under a threshold they meet: weights 0.1 and 0.7 passing, 0.2
// failing, score 0.7999999999999999, which must pass at 0.8.
const reaches = (score: number, threshold: number): boolean => score >= threshold - 1e-9;

const isPromise = (value: GradeResult | Promise<GradeResult>): value is Promise<GradeResult> =>
  value instanceof Promise;

/**
 * Applies the per-assertion threshold (a scored grader passes at `score >= threshold`), then negation:
 * `not-X` passes exactly when X fails, with score 1 - score.
 */
const adjuster =
  (negate: boolean, threshold: number | undefined) =>
  (result: GradeResult): GradeResult => {
    const pass = threshold === undefined ? result.pass : reaches(result.score, threshold);
    if (!negate) return pass === result.pass ? result : { ...result, pass };
    return {
      pass: !pass,
      score: 1 - result.score,
      reason: `negated: ${result.reason}`,
      ...(result.judgeCalls ? { judgeCalls: result.judgeCalls } : {}),
    };
  };

// Held weakly: an entry lives as long as its case's request.
const checkedConfigs = new WeakSet<object>();

/**
 * Marks the config of an assertion the plan checked as written (not rendered since) to be taken as it is, when
 * its kind is cheap: its config parses to itself, so parsing it again for every case's grader bought nothing.
 */
export const takeAsChecked = (kind: GraderKind, config: object): void => {
  if (isCheapKind(kind)) checkedConfigs.add(config);
};

/** Creates the grader of an assertion the plan layer has already split and validated. */
export const resolveAssertion = (spec: ResolvedAssertion, context: GraderContext): CreatedAssertion => {
  // Every registry entry satisfies GraderDef; widening here lets one call site serve every kind.
  const def: GraderDef = graders[spec.kind];
  const config = checkedConfigs.has(spec.config) ? spec.config : def.config().parse(spec.config);
  const inner = def.create(config, context);
  const id = spec.id ?? `${spec.negate ? 'not-' : ''}${spec.kind}`;
  if (!spec.negate && spec.threshold === undefined)
    return { id, weight: spec.weight, required: spec.required, grade: inner };
  const adjust = adjuster(spec.negate, spec.threshold);
  const grade: Grader = (input, signal) => {
    const result = inner(input, signal);
    return isPromise(result) ? result.then(adjust) : adjust(result);
  };
  return { id, weight: spec.weight, required: spec.required, grade };
};

/**
 * Creates an assertion from its YAML form (`type`, `weight`, …, then the kind's own keys).
 * Throws the ZodError of an invalid key, and an InputError for an unknown type.
 */
export const createAssertion = (spec: Readonly<Record<string, unknown>>, context: GraderContext): CreatedAssertion => {
  const common = assertionCommonSchema.parse(spec);
  const parsed = parseAssertionType(common.type);
  if (!parsed) {
    throw new InputError(`unknown assertion type "${common.type}"`, undefined, `use one of: ${graderKinds.join(', ')}`);
  }
  const config = Object.fromEntries(Object.entries(spec).filter(([key]) => !commonKeys.has(key)));
  return resolveAssertion({ ...parsed, ...common, config }, context);
};

/** One graded assertion, as scoreCase weighs it. */
export interface ScoredAssertion {
  weight: number;
  required: boolean;
  pass: boolean;
  score: number;
}

/**
 * A case's score is the weighted mean of its assertions' scores (1 when nothing carries weight). It passes when
 * no required assertion failed and either every weighted assertion passed (a judge's pass at 0.9 is a pass) or
 * the score reaches `threshold` (how much failure the case may carry).
 */
export const scoreCase = (results: readonly ScoredAssertion[], threshold: number): { score: number; pass: boolean } => {
  let total = 0;
  let weighted = 0;
  let requiredFailed = false;
  let weightedFailed = false;
  for (const r of results) {
    total += r.weight;
    weighted += r.weight * r.score;
    if (r.required && !r.pass) requiredFailed = true;
    if (r.weight > 0 && !r.pass) weightedFailed = true;
  }
  const score = total > 0 ? weighted / total : 1;
  return { score, pass: !requiredFailed && (!weightedFailed || reaches(score, threshold)) };
};
