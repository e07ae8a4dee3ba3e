import { InvalidArgumentError } from 'commander';

const unitMs: Readonly<Record<string, number>> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/** A duration as people write one for retention: a whole number and a unit, `45s`, `90m`, `12h`, `30d`, `2w`. */
export const parseDuration = (value: string): number => {
  const match = /^(\d+)([smhdw])$/.exec(value.trim());
  if (!match) {
    throw new InvalidArgumentError(`"${value}" is not a duration; write a number and a unit: 30d, 12h, 90m, 45s or 2w`);
  }
  return Number(match[1]) * (unitMs[match[2] as string] as number);
};
