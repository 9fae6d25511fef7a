/**
 * Issue 4 acceptance 7: a 200 KB log whose only error is at line 9000 is spooled, pruned to a stub
 * with every field, and tool-output returns byte-exact slices of it, also after a worker restart.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killAndWait, runCli, spawnCli, waitFor } from '../support/cli';
import { compactionModel } from '../support/compaction-model';
import { goalTestEnv } from '../support/goal-env';
import { startGoal } from '../support/goal-steps';
import { type OpenAITestServer, startOpenAITestServer } from '../support/openai-test-server';

const LOG_COMMAND =
  'for i in $(seq 1 10000); do if [ $i -eq 9000 ]; then echo "ERROR E9000: disk quota exceeded"; else echo "ok line $i of the build log"; fi; done; exit 1';

/** The text of the last tool message of a request. */
function lastToolText(body: { messages?: Array<{ role: string; content?: unknown }> }): string {
  const tool = [...(body.messages ?? [])].reverse().find((message) => message.role === 'tool');
  return typeof tool?.content === 'string' ? tool.content : JSON.stringify(tool?.content ?? '');
}

describe('spooled output', () => {
  let server: OpenAITestServer;
  beforeAll(async () => {
    server = await startOpenAITestServer();
  });
  afterAll(async () => server?.close());

  it('is pruned to a faithful stub and read back byte-exact, across a worker restart', async () => {
    const t = goalTestEnv('spool');
    // A high low-water mark: pruning alone is enough, so a request shows the stub (at the default 50 %
    // the log is stubbed and summarized away in one compaction, and no request ever shows its stub).
    fs.writeFileSync(path.join(t.home, 'config.json'), JSON.stringify({ auto_compact_target_pct: 80 }));
    const log = execFileSync('bash', ['-c', LOG_COMMAND.replace('; exit 1', '')], { encoding: 'utf8' });
    expect(Buffer.byteLength(log)).toBeGreaterThan(200_000);
    let spoolId: string | undefined;
    let restarted = false;
    const reads = [
      { offset: 0, limit: 64 },
      { offset: 207_000, limit: 4_000 },
    ];
    let readIndex = 0;
    const model = compactionModel({
      main: (n) => {
        if (n === 1) return { toolCalls: [{ name: 'bash', args: { command: LOG_COMMAND } }] };
        if (!spoolId || !restarted) {
          return {
            delayMs: spoolId ? 500 : 0,
            toolCalls: [{ name: 'bash', args: { command: `seq 1 40 | sed 's/^/filler ${n} /'` } }],
          };
        }
        if (readIndex < reads.length) {
          const read = reads[readIndex++];
          return { toolCalls: [{ name: 'tool-output', args: { id: `spool:${spoolId}`, ...read } }] };
        }
        return { toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'read the log' } }] };
      },
    });
    const observe = (body: Parameters<typeof model.fallback>[0]) => {
      const stub = /\[output elided: [^\]]*spool:(\d+)/.exec(JSON.stringify(body.messages ?? []));
      if (stub) spoolId ??= stub[1];
      return model.fallback(body);
    };
    server.setFallback(observe);
    let worker = spawnCli(['worker'], t.env);
    try {
      const { sessionId } = await startGoal(t, server, 'read the build log', ['--context-window', '16000']);
      await waitFor('the log to be pruned to a stub', () => spoolId !== undefined, 120_000);
      await killAndWait(worker, 'SIGTERM');
      worker = spawnCli(['worker'], t.env);
      restarted = true;
      const watched = await runCli(['watch', sessionId, '--json'], t.env, 120_000);
      expect(watched.code, watched.stderr).toBe(0);

      const mains = model.seen.filter((request) => request.kind === 'main');
      const stub = mains
        .flatMap((request) => request.body.messages ?? [])
        .map((message) =>
          message.role === 'tool' && typeof message.content === 'string' ? message.content : '',
        )
        .find((content) => content.startsWith('[output elided:'));
      expect(stub).toBeDefined();
      // Every field of the spec's stub: size, spool id, how to re-read, tool, args, lines, status, head, tail.
      expect(stub).toMatch(
        new RegExp(
          `^\\[output elided: \\d+ chars, spool:${spoolId} — re-read with tool-output \\{"id":"spool:${spoolId}"\\}\\] bash args=\\{"command":"for i in .*"\\} — 10001 lines, status error, head: "ok line 1 of the build log", tail: "\\[exit code 1\\]"`,
        ),
      );
      // Each tool-output answer is the exact byte slice of the original log.
      const answers = mains.slice(-2).map((request) => lastToolText(request.body));
      for (const [index, read] of reads.entries()) {
        const [header, ...rest] = answers[index].split('\n');
        expect(header).toMatch(
          new RegExp(
            `^output=spool:${spoolId} size=\\d+ offset=${read.offset} next_offset=${read.offset + read.limit}`,
          ),
        );
        const expected = Buffer.from(log)
          .subarray(read.offset, read.offset + read.limit)
          .toString('utf8');
        expect(rest.join('\n')).toBe(expected);
      }
    } finally {
      server.setFallback(undefined);
      await killAndWait(worker, 'SIGTERM');
    }
  });
});
