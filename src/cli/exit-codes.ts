/** DESIGN.md's exit codes: what scripts and CI read. */
export const exitCodes = {
  ok: 0,
  failed: 1,
  badInput: 2,
  sigint: 130,
  sigterm: 143,
} as const;
