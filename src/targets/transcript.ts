import type { Message } from '../records.js';

/** The transcript of one exchange: the optional system prompt, the prompt, the reply. */
export const singleTurn = (prompt: string, reply: string, system?: string): Message[] => [
  ...(system === undefined ? [] : [{ role: 'system' as const, content: system }]),
  { role: 'user', content: prompt },
  { role: 'assistant', content: reply },
];

const only = (message: Message | undefined, role: Message['role'], content: string): boolean =>
  message?.role === role && message.content === content && Object.keys(message).length === 2;

/**
 * Whether `transcript` says no more than `prompt` and its `reply`: the `singleTurn` of the two, without a system
 * prompt. A step's record then leaves it out, and whoever reads the record makes it again from the two.
 */
export const isSingleTurn = (transcript: readonly Message[], prompt: string, reply: string): boolean =>
  transcript.length === 2 && only(transcript[0], 'user', prompt) && only(transcript[1], 'assistant', reply);
