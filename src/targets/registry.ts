import { anthropic } from './anthropic.js';
import { cli } from './cli.js';
import { echo } from './echo.js';
import { http } from './http.js';
import { openai } from './openai.js';
import type { TargetDef } from './target.js';

/** Every target kind. A new kind is its own file plus one entry here; TargetKind and the schema follow. */
export const targets = { openai, anthropic, http, cli, echo } satisfies Record<string, TargetDef>;
export type TargetKind = keyof typeof targets;
