/**
 * Model and tool text is arbitrary Unicode (issue 31): random strings, lone surrogates and NUL
 * included, go through every summary, clip and store write over real PostgreSQL, and none of them
 * may fail a write. Text with emoji and CJK clipped at every length from 1 to 200 reads back exactly
 * as it was clipped (the clip never leaves a lone surrogate for the store to replace).
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { MockActivityEnvironment } from '@temporalio/testing';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { summaryOf } from '../../activities/model-step-result';
import { createToolActivity } from '../../activities/tool-activity';
import { findTool } from '../../activities/tool-catalog';
import { summarizeBash } from '../../activities/tools/bash';
import { JobManager } from '../../activities/tools/jobs';
import { argsDigest } from '../../core/compaction/stub';
import { noteAction } from '../../core/goal';
import type { StoredMessage } from '../../core/messages';
import { storeKeys } from '../../core/store-keys';
import { clip, clipBytes, clipHead, clipTail, oneLine, storableText } from '../../core/text';
import { edgeLines, truncateForModel } from '../../core/truncate';
import { openStore } from '../../store/open';
import type { SessionStore } from '../../store/types';
import { makeWorkspace, removeWorkspace } from '../tools/helpers';

let store: SessionStore;
let workspace: string;
const jobs = new JobManager({ killGraceMs: 300 });
let activity: ReturnType<typeof createToolActivity>;

beforeAll(async () => {
  const home = await mkdtemp(path.join(os.tmpdir(), 'goalrun-unicode-'));
  store = await openStore({ databaseUrl: inject('databaseUrl'), home });
  workspace = await makeWorkspace();
  activity = createToolActivity({ store, secrets: [], processQueue: 'goalrun-tools@unicode', jobs });
});

afterAll(async () => {
  await store?.close();
  await removeWorkspace(workspace);
});

async function newSession(objective = 'unicode'): Promise<string> {
  const id = `unicode-${randomUUID()}`;
  await store.createSession({
    id,
    projectDir: workspace,
    projectHash: 'h',
    objective,
    model: 'scripted:x',
    workflowId: `wf-${id}`,
  });
  return id;
}

/** Every summary a tool call can get, for arguments made of `text`. */
function summariesOf(text: string): string[] {
  const args = {
    command: text,
    path: text,
    pattern: text,
    query: text,
    job_id: text,
    id: text,
    content: text,
  };
  const names = [
    'bash',
    'file-read',
    'file-write',
    'file-edit',
    'glob',
    'grep',
    'job-output',
    'memory-search',
  ];
  const summaries = names.map((name) => {
    const tool = findTool(name);
    return tool ? tool.summarize(args) : name;
  });
  const calls = names.map((toolName) =>
    summaryOf({ type: 'tool-call', toolCallId: 'c', toolName, input: args }, null),
  );
  return [...summaries, ...calls, summarizeBash({ command: text }), argsDigest(args)];
}

/** What the store keeps of a string: the same text, lone surrogates and NUL as U+FFFD. */
const kept = storableText;

describe('arbitrary Unicode through every write', () => {
  it('stores any text, lone surrogates and NUL included, in messages, events, state, spool and sessions', async () => {
    const unicode = fc.string({ unit: 'binary', maxLength: 60 });
    await fc.assert(
      fc.asyncProperty(unicode, unicode, fc.integer({ min: 1, max: 80 }), async (text, key, max) => {
        const sessionId = await newSession(text);
        const clips = [
          clip(text, max),
          clipHead(text, max),
          clipTail(text, max),
          clipBytes(text, max),
          oneLine(text),
        ];
        const summaries = summariesOf(text);
        // An assistant answer with text and a tool call whose arguments have arbitrary keys and values.
        const assistant: StoredMessage = {
          role: 'assistant',
          content: [
            { type: 'text', text },
            {
              type: 'tool-call',
              toolCallId: 'call_1_0',
              toolName: 'bash',
              input: { [key]: text, command: text },
            },
          ],
        };
        const state = noteAction(
          { recent: [], actions: 0 } as unknown as Parameters<typeof noteAction>[0],
          summaries[0],
        );
        await store.appendMessage(sessionId, storeKeys.assistant(1, 1), assistant, {
          meta: { from: text },
          state: { set: { reason: text, recent: state.recent, clips } },
          event: { kind: 'notice', data: { text, summaries }, key: 'e-1' },
        });
        await store.writeGoalState(
          sessionId,
          { set: { objectiveNote: text }, reason: text },
          {
            kind: 'notice',
            data: { [key]: text },
            key: 'e-2',
          },
        );
        const output = `${text}\n${text}`;
        const edges = edgeLines(output, max);
        const recorded = await store.recordToolResult({
          sessionId,
          toolCallId: 'call_1_0',
          toolName: 'bash',
          messageKey: storeKeys.toolResult('call_1_0'),
          eventKey: storeKeys.toolEvent('call_1_0'),
          spoolContent: output,
          message: (spoolId) => ({
            role: 'tool',
            content: [
              {
                type: 'tool-result',
                toolCallId: 'call_1_0',
                toolName: 'bash',
                output: { type: 'text', value: truncateForModel(output, spoolId ?? 0, max) },
              },
            ],
          }),
          facts: {
            ok: true,
            changedWorkspace: false,
            bytes: Buffer.byteLength(output),
            lines: 2,
            firstLine: edges.first,
            lastLine: edges.last,
            argsDigest: argsDigest({ [key]: text }),
          },
          eventExtra: { head: text },
        });
        const saved = (await store.getSession(sessionId))?.goalState as {
          clips: string[];
          objectiveNote: string;
        };
        expect(saved.objectiveNote).toBe(kept(text));
        // Clips of well-formed text are well-formed: they read back exactly.
        if (text.isWellFormed() && !text.includes('\0')) expect(saved.clips).toEqual(clips);
        await store.saveWorkspaceContext(sessionId, 1, { notices: [text], [key]: clips });
        await store.writeGoalState(sessionId, { set: { reason: text }, full: true });
        await store.saveCheckpoint(sessionId, { reason: text }, [{ id: 'task-1', content: text }]);
        await store.appendEvent(sessionId, 'notice', { text }, `e-3-${key}`);
        await store.updateSession(sessionId, { reason: text, goalState: { [key]: text } });

        const messages = await store.listMessages(sessionId);
        expect(messages).toHaveLength(2);
        const stored = messages[0].message;
        expect(stored.role === 'assistant' && stored.content[0]).toEqual({ type: 'text', text: kept(text) });
        expect(stored.role === 'assistant' && stored.content[1]).toMatchObject({
          input: { [kept(key)]: kept(text), command: kept(text) },
        });
        const session = await store.getSession(sessionId);
        expect(session?.objective).toBe(kept(text));
        expect(session?.reason).toBe(kept(text));
        expect(session?.goalState).toEqual({ [kept(key)]: kept(text) });
        const events = await store.listEvents(sessionId);
        expect(events[0].data).toEqual({ text: kept(text), summaries: summaries.map(kept) });
        expect((await store.latestWorkspaceContext(sessionId))?.data).toEqual({
          notices: [kept(text)],
          [kept(key)]: clips.map(kept),
        });
        const page = await store.readSpool(sessionId, recorded.facts.spoolId as number, 0, 1 << 20);
        expect(page?.content).toBe(kept(output));
      }),
      { numRuns: 120 },
    );
  });
});

/** Texts of the acceptance: the command, a file name and a tool output with emoji and CJK. */
const COMMAND = `${'a'.repeat(58)}😀😀😀😀😀😀😀😀 tail; echo printed`;
const FILE_NAME = 'src/数据分析/报告😀👨‍👩‍👧‍👦🇯🇵-最终版.md';
const TOOL_OUTPUT = '构建成功 ✅ 😀😀 テスト 12/12 通過 — 👍🏽 done\n第二行：中文输出 🎉';

describe('emoji and CJK clipped at every length from 1 to 200', () => {
  for (const [name, text] of [
    ['the issue command', COMMAND],
    ['a file name', FILE_NAME],
    ['a tool output', TOOL_OUTPUT],
  ] as const) {
    it(`stores ${name} clipped at every length, exactly as clipped`, async () => {
      const sessionId = await newSession(clip(text, 40));
      const long = text.repeat(8);
      for (let max = 1; max <= 200; max += 1) {
        const padded = `${'a'.repeat(max)}${text}`;
        const clips = {
          clip: clip(long, max),
          head: clipHead(long, max),
          tail: clipTail(long, max),
          bytes: clipBytes(long, max),
          // The summaries cut at fixed lengths: moving the text under the cut crosses every character.
          summaries: summariesOf(padded),
          edges: edgeLines(padded),
        };
        for (const value of [clips.clip, clips.head, clips.tail, clips.bytes, ...clips.summaries])
          expect(value.isWellFormed()).toBe(true);
        await store.appendEvent(sessionId, 'notice', clips, `clip-${max}`);
        await store.writeGoalState(sessionId, { set: { recent: [{ n: max, text: clips.summaries[0] }] } });
        const event = await store.getEventByKey(sessionId, `clip-${max}`);
        expect(event?.data).toEqual(clips);
      }
    });
  }
});

describe('the tool pipeline with emoji and CJK', () => {
  let input: {
    sessionId: string;
    stepNumber: number;
    toolCallId: string;
    toolName: string;
    workspace: string;
    assistantKey: string;
  };

  async function call(toolName: string, args: unknown) {
    const sessionId = await newSession();
    const assistantKey = storeKeys.assistant(1, 1);
    await store.appendMessage(sessionId, assistantKey, {
      role: 'assistant',
      content: [{ type: 'tool-call', toolCallId: 'call_1_0', toolName, input: args }],
    });
    input = { sessionId, stepNumber: 1, toolCallId: 'call_1_0', toolName, workspace, assistantKey };
    const run: typeof activity.runTool = (each) =>
      new MockActivityEnvironment({ attempt: 1 }).run(activity.runTool, each);
    return run(input);
  }

  it('lists and stores file names with emoji and CJK whose clipped edges cross every character', async () => {
    const dir = path.join(workspace, 'names');
    mkdirSync(dir, { recursive: true });
    // Lines of 100 to 140 units: the edge lines (clipped at 120) are cut at every position of the name.
    for (let pad = 100; pad <= 140; pad += 1)
      writeFileSync(path.join(dir, `${'n'.repeat(pad - 20)}😀中😀文😀.txt`), 'x');
    const result = await call('glob', { pattern: 'names/*😀*' });
    expect(result.ok).toBe(true);
    const messages = await store.listMessages(input.sessionId);
    const output = JSON.stringify(messages[1].message);
    expect(output).toContain('😀中😀文😀.txt');
    expect(result.firstLine.isWellFormed() && result.lastLine.isWellFormed()).toBe(true);
  });

  it('runs the issue command and stores its output (a bash call whose summary cut an emoji in half)', async () => {
    const result = await call('bash', { command: `echo ${COMMAND}` });
    expect(result.ok).toBe(true);
    const messages = await store.listMessages(input.sessionId);
    expect(JSON.stringify(messages[1].message)).toContain('😀😀😀😀😀😀😀😀 tail');
  });

  it('stores a tool output whose lines of emoji and CJK are clipped at every length', async () => {
    const lines = Array.from(
      { length: 200 },
      (_, index) => `${'x'.repeat(index)}${TOOL_OUTPUT.replace('\n', ' ')}`,
    );
    writeFileSync(path.join(workspace, 'out.txt'), `${lines.join('\n')}\n`);
    for (const [first, last] of [
      [1, 60],
      [100, 130],
      [199, 200],
    ]) {
      const result = await call('bash', { command: `sed -n '${first}p;${last}p' out.txt` });
      expect(result.ok).toBe(true);
      expect(result.firstLine).toBe(clipHead(lines[first - 1], 120));
      const stored = await store.getEventByKey(input.sessionId, storeKeys.toolEvent('call_1_0'));
      expect(stored?.data).toMatchObject({ firstLine: result.firstLine });
    }
  });
});
