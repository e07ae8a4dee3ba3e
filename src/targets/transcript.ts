import type { Message } from '../records.js';

/** The transcript of one exchange: the optional system prompt, the prompt, the reply. */
export const singleTurn = (prompt: string, reply: string, system?: string): Message[] => [
  ...(system === undefined ? [] : [{ role: 'system' as const, content: system }]),
  { role: 'user', content: prompt },
  { role: 'assistant', content: reply },
];
