import { parse as parseYaml } from 'yaml';
import type { Message } from '../records.js';

const roles: readonly string[] = ['system', 'user', 'assistant'];

const partText = (part: unknown): string | undefined => {
  if (typeof part === 'string') return part;
  if (part !== null && typeof part === 'object' && 'text' in part && typeof part.text === 'string') return part.text;
  return undefined;
};

/** One `{role, content}` message of a chat prompt; content is text or a list of `{type: 'text', text}` parts. */
const readMessage = (value: unknown): Message | undefined => {
  if (value === null || typeof value !== 'object' || !('role' in value) || !('content' in value)) return undefined;
  const { role, content } = value;
  if (typeof role !== 'string' || !roles.includes(role)) return undefined;
  const parts = Array.isArray(content) ? content.map(partText) : [partText(content)];
  if (parts.some((p) => p === undefined)) return undefined;
  return { role: role as Message['role'], content: parts.join('') };
};

const parsed = (text: string): unknown => {
  const trimmed = text.trim();
  if (!trimmed.startsWith('[') && !trimmed.startsWith('-')) return undefined;
  try {
    return trimmed.startsWith('[') ? JSON.parse(trimmed) : parseYaml(trimmed);
  } catch {
    return undefined;
  }
};

/**
 * A rendered prompt that is a JSON or YAML list of chat messages (promptfoo's chat prompt files), as those
 * messages; undefined for any other text, which is sent as one user message.
 */
export const chatMessages = (prompt: string): Message[] | undefined => {
  const value = parsed(prompt);
  if (!Array.isArray(value) || value.length === 0) return undefined;
  const messages = value.map(readMessage);
  return messages.every((m) => m !== undefined) ? (messages as Message[]) : undefined;
};
