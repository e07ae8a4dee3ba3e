// A fake Anthropic Messages API (`POST /v1/messages`) over real HTTP on 127.0.0.1. The same directives as the
// OpenAI-compatible fake ([[status:429 retry-after:1 times:1]], [[reply:…]], …), plus [[stop:max_tokens]].
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { contentText, type FakeReply, parseDirectives, readBody, sendJson } from './fake-model-server.js';

export interface AnthropicUsage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens?: number;
  cache_read_input_tokens?: number;
  output_tokens_details?: { thinking_tokens: number };
}

interface MessagesBody {
  model?: string;
  system?: unknown;
  max_tokens?: number;
  messages?: { role?: string; content?: unknown }[];
  tools?: { name?: string }[];
  tool_choice?: { type?: string; name?: string };
  thinking?: { type?: string; budget_tokens?: number };
  cache_control?: { type?: string };
}

export interface FakeAnthropicRequest {
  prompt: string;
  status: number;
  at: number;
  headers: IncomingMessage['headers'];
  body: MessagesBody;
}

export interface FakeAnthropicServer {
  /** Base URL including `/v1`. */
  readonly url: string;
  readonly requests: readonly FakeAnthropicRequest[];
  close(): Promise<void>;
}

const errorTypes: Record<number, string> = {
  400: 'invalid_request_error',
  429: 'rate_limit_error',
  529: 'overloaded_error',
};

export const startFakeAnthropicServer = async (
  options: { usage?: AnthropicUsage; respond?: (prompt: string) => FakeReply | undefined } = {},
): Promise<FakeAnthropicServer> => {
  const requests: FakeAnthropicRequest[] = [];
  const perPrompt = new Map<string, number>();
  let id = 0;
  const server: Server = createServer((req, res) => {
    void readBody(req).then((raw) => {
      if (req.method !== 'POST' || !req.url?.endsWith('/messages')) {
        sendJson(res, 404, { type: 'error', error: { type: 'not_found_error', message: `no route ${req.url}` } });
        return;
      }
      const body = JSON.parse(raw) as MessagesBody;
      const last = [...(body.messages ?? [])].reverse().find((m) => m.role === 'user');
      const prompt = contentText(last?.content);
      const d = parseDirectives(prompt);
      const seen = perPrompt.get(prompt) ?? 0;
      perPrompt.set(prompt, seen + 1);
      // As the real API: extended thinking cannot be combined with a forced tool call.
      const forcedWhileThinking = body.thinking?.type === 'enabled' && body.tool_choice?.type === 'tool';
      const status = forcedWhileThinking ? 400 : d.status !== undefined && seen < d.times ? d.status : 200;
      requests.push({ prompt, status, at: Date.now(), headers: req.headers, body });
      if (status !== 200) {
        const headers: Record<string, string> = {};
        if (d.retryAfter !== undefined) headers['retry-after'] = d.retryAfter;
        sendJson(
          res,
          status,
          { type: 'error', error: { type: errorTypes[status] ?? 'api_error', message: `fake ${status}` } },
          headers,
        );
        return;
      }
      const scripted = options.respond?.(prompt);
      // A forced tool, else (tool_choice auto) the first tool offered, when the script calls one.
      const tool =
        body.tool_choice?.type === 'tool'
          ? body.tool_choice.name
          : scripted && 'toolInput' in scripted
            ? body.tools?.[0]?.name
            : undefined;
      const content =
        scripted && 'toolInput' in scripted && tool
          ? [{ type: 'tool_use', id: `toolu_${++id}`, name: tool, input: scripted.toolInput }]
          : [{ type: 'text', text: scripted && 'text' in scripted ? scripted.text : (d.reply ?? `echo: ${prompt}`) }];
      const stop = prompt.includes('[[stop:max_tokens]]') ? 'max_tokens' : tool ? 'tool_use' : 'end_turn';
      sendJson(res, 200, {
        id: `msg_${++id}`,
        type: 'message',
        role: 'assistant',
        model: body.model ?? 'fake',
        content,
        stop_reason: stop,
        stop_sequence: null,
        usage: options.usage ?? { input_tokens: 10, output_tokens: 5 },
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
};
