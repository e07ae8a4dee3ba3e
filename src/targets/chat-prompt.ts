import type { LanguageModelV3Prompt } from '@ai-sdk/provider';
import { parse as parseYaml } from 'yaml';

type Role = 'system' | 'user' | 'assistant';
const roles: readonly string[] = ['system', 'user', 'assistant'];

/** One `{role, content}` message of a chat prompt; content is text or a list of `{type: 'text', text}` parts. */
interface ChatMessage {
  role: Role;
  text: string;
}

const partText = (part: unknown): string | undefined => {
  if (typeof part === 'string') return part;
  if (part !== null && typeof part === 'object' && 'text' in part && typeof part.text === 'string') return part.text;
  return undefined;
};

const readMessage = (value: unknown): ChatMessage | undefined => {
  if (value === null || typeof value !== 'object' || !('role' in value) || !('content' in value)) return undefined;
  const { role, content } = value;
  if (typeof role !== 'string' || !roles.includes(role)) return undefined;
  const parts = Array.isArray(content) ? content.map(partText) : [partText(content)];
  if (parts.some((p) => p === undefined)) return undefined;
  return { role: role as Role, text: parts.join('') };
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
export const chatMessages = (prompt: string): ChatMessage[] | undefined => {
  const value = parsed(prompt);
  if (!Array.isArray(value) || value.length === 0) return undefined;
  const messages = value.map(readMessage);
  return messages.every((m) => m !== undefined) ? (messages as ChatMessage[]) : undefined;
};

/** The messages in the AI SDK's prompt shape. */
export const sdkPrompt = (messages: readonly ChatMessage[]): LanguageModelV3Prompt =>
  messages.map((m) =>
    m.role === 'system'
      ? { role: 'system', content: m.text }
      : m.role === 'user'
        ? { role: 'user', content: [{ type: 'text', text: m.text }] }
        : { role: 'assistant', content: [{ type: 'text', text: m.text }] },
  );
