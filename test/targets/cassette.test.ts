import { afterEach, describe, expect, it } from 'vitest';
import { ProctorError } from '../../src/errors.js';
import type { JsonObject } from '../../src/records.js';
import { CaseCassette } from '../../src/targets/cassette.js';
import { type TempProject, tempProject } from '../support/project.js';

const request = (content: string, sample = 0): JsonObject => ({
  kind: 'openai',
  model: 'm',
  params: { temperature: 0 },
  messages: [{ role: 'user', content }],
  sample,
});

describe('a case cassette', () => {
  let project: TempProject;
  afterEach(() => project.remove());

  // A live call that answers with how many live calls were made: replay must never reach it.
  const liveCounter = () => {
    let calls = 0;
    const live = async () => ({ response: { text: `live ${++calls}` }, latencyMs: 12.4 });
    return { live, calls: () => calls };
  };

  it('records each identical call of a case apart, and replays them in order without calling anything', async () => {
    project = tempProject();
    const file = project.path('cassettes/a.eval.yaml/k1.jsonl');
    const rec = liveCounter();
    const recording = new CaseCassette(file, 'record-missing');
    expect((await recording.call(request('hi'), rec.live)).response).toEqual({ text: 'live 1' });
    expect((await recording.call(request('hi'), rec.live)).response).toEqual({ text: 'live 2' });
    expect((await recording.call(request('hi', 1), rec.live)).response).toEqual({ text: 'live 3' });
    expect(rec.calls()).toBe(3);
    const lines = project.read('cassettes/a.eval.yaml/k1.jsonl').trim().split('\n');
    expect(lines.map((l) => (JSON.parse(l) as { ordinal: number }).ordinal)).toEqual([0, 1, 0]);

    const play = liveCounter();
    const replaying = new CaseCassette(file, 'replay');
    const first = await replaying.call(request('hi'), play.live);
    expect(first).toEqual({ response: { text: 'live 1' }, latencyMs: 12, replayed: true });
    expect((await replaying.call(request('hi'), play.live)).response).toEqual({ text: 'live 2' });
    expect((await replaying.call(request('hi', 1), play.live)).response).toEqual({ text: 'live 3' });
    expect(play.calls()).toBe(0);
    const third = replaying.call(request('hi'), play.live);
    await expect(third).rejects.toThrow(/recorded fewer times/);
  });

  it('a strict replay miss is a cassette_miss naming the field that differs from the nearest recording', async () => {
    project = tempProject();
    const file = project.path('c/k.jsonl');
    await new CaseCassette(file, 'record').call(request('what is 2+2?'), liveCounter().live);
    const miss = await new CaseCassette(file, 'replay')
      .call(request('what is 3+3?'), liveCounter().live)
      .catch((e: unknown) => e);
    expect(miss).toBeInstanceOf(ProctorError);
    expect((miss as ProctorError).kind).toBe('cassette_miss');
    expect((miss as ProctorError).retryable).toBe(false);
    expect((miss as ProctorError).message).toContain(
      'messages[0].content: recorded "what is 2+2?", now "what is 3+3?"',
    );
    const none = await new CaseCassette(project.path('c/other.jsonl'), 'replay')
      .call(request('x'), liveCounter().live)
      .catch((e: unknown) => e);
    expect((none as ProctorError).message).toContain('nothing is recorded for this case');
  });

  it('record replaces what the run touches and keeps the rest; off never reads or writes the file', async () => {
    project = tempProject();
    const file = project.path('c/k.jsonl');
    const first = liveCounter();
    const recording = new CaseCassette(file, 'record');
    await recording.call(request('a'), first.live);
    await recording.call(request('b'), first.live);
    const again = liveCounter();
    const rerecord = new CaseCassette(file, 'record');
    await rerecord.call(request('a'), async () => ({ response: { text: 'new a' }, latencyMs: 1 }));
    const replay = new CaseCassette(file, 'replay');
    expect((await replay.call(request('a'), again.live)).response).toEqual({ text: 'new a' });
    expect((await replay.call(request('b'), again.live)).response).toEqual({ text: 'live 2' });

    const off = liveCounter();
    const result = await new CaseCassette(project.path('c/none.jsonl'), 'off').call(request('a'), off.live);
    expect(result).toEqual({ response: { text: 'live 1' }, latencyMs: 12.4, replayed: false });
    expect(project.exists('c/none.jsonl')).toBe(false);
  });
});
