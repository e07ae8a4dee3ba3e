import { z } from 'zod';

/**
 * Walks a zod schema along a data path to list the keys allowed there: zod's `unrecognized_keys` issue names
 * the bad key but not the good ones, and a hint without them sends the user to the docs.
 */
export const keysAt = (schema: z.ZodType, path: readonly (string | number)[]): string[] => {
  let at: z.ZodType | undefined = unwrap(schema);
  for (const seg of path) {
    if (!at) return [];
    if (at instanceof z.ZodObject) at = (at.shape as Record<string, z.ZodType>)[String(seg)];
    else if (at instanceof z.ZodArray) at = at.element as z.ZodType;
    else if (at instanceof z.ZodRecord) at = at.valueType as z.ZodType;
    else if (at instanceof z.ZodUnion) at = firstObject(at)?.shape[String(seg)] as z.ZodType | undefined;
    else return [];
    at = at ? unwrap(at) : undefined;
  }
  const object = at instanceof z.ZodObject ? at : at instanceof z.ZodUnion ? firstObject(at) : undefined;
  return object ? Object.keys(object.shape) : [];
};

/** The object schema inside optional / default / nullable / pipe wrappers, if any. */
export const objectSchema = (schema: z.ZodType): z.ZodObject | undefined => {
  const inner = unwrap(schema);
  return inner instanceof z.ZodObject ? inner : undefined;
};

const firstObject = (union: z.ZodUnion): z.ZodObject | undefined => {
  for (const option of union.options as readonly z.ZodType[]) {
    const inner = unwrap(option);
    if (inner instanceof z.ZodObject) return inner;
    if (inner instanceof z.ZodArray) {
      const element = unwrap(inner.element as z.ZodType);
      if (element instanceof z.ZodUnion) return firstObject(element);
    }
  }
  return undefined;
};

const unwrap = (schema: z.ZodType): z.ZodType => {
  let at = schema;
  for (let i = 0; i < 20; i++) {
    if (at instanceof z.ZodOptional || at instanceof z.ZodNullable) at = at.unwrap() as z.ZodType;
    else if (at instanceof z.ZodDefault || at instanceof z.ZodPrefault) at = at.unwrap() as z.ZodType;
    else if (at instanceof z.ZodPipe) at = at.in as z.ZodType;
    else break;
  }
  return at;
};
