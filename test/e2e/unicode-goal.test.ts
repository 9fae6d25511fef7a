/**
 * Issue 31, acceptance: model and tool text is arbitrary Unicode and untrusted. A scripted goal whose
 * bash command is the one that wedged goals (an emoji cut in half by the one-line summary), whose
 * commands and outputs carry CJK, emoji and a terminal escape sequence, and whose files have emoji
 * and CJK names, completes; `run`, `watch`, `status` and `transcript` show the escape sequence as
 * visible text and never send it to the terminal, while `--json`, `stream-json` and `transcript
 * --format jsonl` keep the raw text.
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { SessionStore } from '../../store/types';
import { killAndWait, runCli, scriptedModel, spawnCli } from '../support/cli';
import { goalTestEnv, testStore } from '../support/goal-env';

/** The command of the issue: 58 letters, eight emoji, a tail. */
const EMOJI_COMMAND = `${'a'.repeat(58)}😀😀😀😀😀😀😀😀 tail; echo printed`;
/** Sets the terminal's title and clears its screen, when a terminal acts on it. */
const ESCAPES = '\x1b]0;pwned\x07\x1b[2J';
/** How it must show: visibly. */
const SHOWN = '\\x1b]0;pwned\\x07\\x1b[2J';

/** The finish summary: the workflow keeps its first 8,000 units, and the cut falls inside an emoji. */
const FINISH_HEAD = `done ${ESCAPES} 完成 😀 `;
const FINISH_SUMMARY = `${FINISH_HEAD}${'x'.repeat(7998 - FINISH_HEAD.length)}😀😀 the end`;

const turns = [
  { toolCalls: [{ name: 'bash', args: { command: EMOJI_COMMAND } }] },
  { toolCalls: [{ name: 'bash', args: { command: `echo '${ESCAPES} 构建成功 😀'` } }] },
  { toolCalls: [{ name: 'file-write', args: { path: '数据/报告😀👨‍👩‍👧‍👦.md', content: '# 报告 😀\n' } }] },
  { toolCalls: [{ name: 'glob', args: { pattern: '**/*😀*' } }] },
  {
    text: `Done ${ESCAPES} 完成 😀`,
    toolCalls: [{ name: 'finish', args: { status: 'complete', summary: FINISH_SUMMARY } }],
  },
];

/** No raw escape (or other control character but newline) reached the output. */
function expectNoControls(output: string): void {
  const controls = [...output].filter((char) => {
    const code = char.charCodeAt(0);
    return char !== '\n' && (code < 0x20 || (code >= 0x7f && code <= 0x9f));
  });
  expect(controls).toEqual([]);
}

describe('a goal whose text is emoji, CJK and escape sequences', () => {
  const t = goalTestEnv('unicode');
  let store: SessionStore;
  const workers: ReturnType<typeof spawnCli>[] = [];
  afterAll(async () => {
    for (const worker of workers) await killAndWait(worker, 'SIGTERM');
    await store?.close();
  });

  it('completes, shows the escapes visibly to people and keeps them raw in data', async () => {
    const model = scriptedModel(t.home, turns);
    const run = await runCli(
      ['run', `处理数据 😀 ${ESCAPES}`, '--workspace', t.workspace, '--model', model],
      t.env,
    );
    expect(run.stderr).not.toMatch(/error/i);
    expect(run.code).toBe(0);
    expectNoControls(run.stdout + run.stderr);
    expect(run.stdout).toContain(SHOWN);
    expect(run.stdout).toMatch(/goal completed/);
    const sessionId = /^goal \S+ \(session (\S+)\)$/m.exec(run.stdout)?.[1] as string;

    // The summary of the emoji command (60 units at most): the cut at 59 falls inside the first emoji,
    // so the summary ends before it (it used to keep half of it, and the store refused the step).
    expect(run.stdout).toContain(`step 1 · bash: ${'a'.repeat(58)}…\n`);

    store = await testStore(t.databaseUrl);
    const messages = await store.listMessages(sessionId);
    const text = JSON.stringify(messages.map((entry) => entry.message));
    expect(text).toContain('printed');
    expect(text).toContain('数据/报告😀👨‍👩‍👧‍👦.md');
    // The store keeps the raw text: what the tool printed, escapes and all.
    expect(text).toContain(`${JSON.stringify(ESCAPES).slice(1, -1)} 构建成功 😀`);

    // `run` ends once the goal's state is final, which can be a moment before its workflow closes;
    // a worker of the task queue finishes that, as one would in real use.
    const worker = spawnCli(['worker'], t.env);
    workers.push(worker);
    const watch = await runCli(['watch', sessionId], t.env);
    expect(watch.code).toBe(0);
    expectNoControls(watch.stdout + watch.stderr);
    expect(watch.stdout).toContain(`bash: echo '${SHOWN} 构建成功 😀'`);
    expect(watch.stdout).toContain(`summary: done ${SHOWN} 完成 😀 xxx`);

    const status = await runCli(['status', sessionId], t.env);
    expectNoControls(status.stdout + status.stderr);
    expect(status.stdout).toContain(`objective  处理数据 😀 ${SHOWN}`);

    const transcript = await runCli(['transcript', sessionId], t.env);
    expect(transcript.code).toBe(0);
    expectNoControls(transcript.stdout.replaceAll('\t', ''));
    expect(transcript.stdout).toContain(`${SHOWN} 构建成功 😀`);
    expect(transcript.stdout).toContain('数据/报告😀👨‍👩‍👧‍👦.md');

    // Data keeps the raw text.
    const jsonl = await runCli(['transcript', sessionId, '--format', 'jsonl'], t.env);
    expect(
      jsonl.stdout
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.stringify(JSON.parse(line)))
        .join('\n'),
    ).toContain('\\u001b]0;pwned\\u0007');
    const json = await runCli(['status', sessionId, '--json'], t.env);
    const view = JSON.parse(json.stdout);
    expect(view).toMatchObject({ status: 'completed', objective: `处理数据 😀 ${ESCAPES}` });
    // Clipped in workflow code, before the emoji that the 8,000th unit would have cut in half.
    expect(view.finishSummary).toBe(`${FINISH_SUMMARY.slice(0, 7998)}…`);
    const stream = await runCli(['watch', sessionId, '--output-format', 'stream-json'], t.env);
    expect(stream.code).toBe(0);
    // JSON writes the raw escape character as \u001b: the data holds it, not its visible form.
    const events = stream.stdout.split('\n').filter(Boolean);
    expect(events.length).toBeGreaterThan(0);
    expect(stream.stdout).toContain(`${JSON.stringify(ESCAPES).slice(1, -1)} 完成 😀`);
    expect(stream.stdout).not.toContain(SHOWN);
  });
});
