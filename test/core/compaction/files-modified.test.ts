import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  filesModifiedFromToolLog,
  looksLikeWritingCommand,
  NO_FILES_MODIFIED,
  pairToolCalls,
  renderFilesModified,
} from '../../../core/compaction/files-modified';
import type { StoredMessage, ToolCallPart, ToolResultPart } from '../../../core/messages';

function call(toolCallId: string, toolName: string, input: unknown): ToolCallPart {
  return { type: 'tool-call', toolCallId, toolName, input };
}

function result(
  toolCallId: string,
  toolName: string,
  ok: boolean,
  value = ok ? 'done' : 'failed',
): ToolResultPart {
  return { type: 'tool-result', toolCallId, toolName, output: { type: ok ? 'text' : 'error-text', value } };
}

function assistant(...calls: ToolCallPart[]): StoredMessage {
  return { role: 'assistant', content: calls };
}

function tool(...results: ToolResultPart[]): StoredMessage {
  return { role: 'tool', content: results };
}

describe('filesModifiedFromToolLog', () => {
  it('lists successful writes and edits per path, in order of first change', () => {
    const messages: StoredMessage[] = [
      { role: 'user', content: [{ type: 'text', text: 'fix it' }] },
      assistant(call('1', 'file-write', { path: 'src/b.ts', content: 'é😀' })),
      tool(result('1', 'file-write', true)),
      assistant(
        call('2', 'file-edit', { path: 'src/a.ts', old_string: 'foo()', new_string: 'bar()' }),
        call('3', 'file-edit', { path: 'src/c.ts', old_string: 'x', new_string: 'y' }),
      ),
      tool(result('2', 'file-edit', true), result('3', 'file-edit', false)),
      assistant(
        call('4', 'file-edit', { path: 'src/b.ts', old_string: 'a\nb', new_string: 'c', replace_all: true }),
      ),
      tool(result('4', 'file-edit', true)),
      assistant(call('5', 'file-write', { path: 'src/unanswered.ts', content: 'x' })),
    ];
    expect(filesModifiedFromToolLog(messages)).toEqual({
      files: [
        {
          path: 'src/b.ts',
          changes: ['written (6 bytes)', 'edited (all occurrences): replaced `a\\nb` with `c`'],
        },
        { path: 'src/a.ts', changes: ['edited: replaced `foo()` with `bar()`'] },
      ],
      possiblyChangedByCommands: [],
    });
  });

  it('matches results by toolCallId wherever they are, and skips calls without a usable path', () => {
    const messages: StoredMessage[] = [
      assistant(
        call('w', 'file-write', { path: 'late.txt', content: 'abc' }),
        call('bad', 'file-write', 'raw'),
      ),
      tool(result('other', 'bash', false)),
      tool(result('bad', 'file-write', true), result('w', 'file-write', true)),
    ];
    expect(filesModifiedFromToolLog(messages).files).toEqual([
      { path: 'late.txt', changes: ['written (3 bytes)'] },
    ]);
  });

  it('clips edit snippets', () => {
    const messages = [
      assistant(
        call('1', 'file-edit', { path: 'p', old_string: 'o'.repeat(100), new_string: 'n'.repeat(100) }),
      ),
      tool(result('1', 'file-edit', true)),
    ];
    const [change] = filesModifiedFromToolLog(messages).files[0].changes;
    expect(change).toBe(`edited: replaced \`${'o'.repeat(39)}…\` with \`${'n'.repeat(39)}…\``);
  });

  it('does not count bash as an edit but lists commands that look like they write', () => {
    const messages = [
      assistant(
        call('1', 'bash', { command: 'go test ./... 2>&1' }),
        call('2', 'bash', { command: "sed -i 's/a/b/' main.go" }),
        call('3', 'bash', { command: 'echo hi > out.txt' }),
        call('4', 'bash', { command: 'echo hi > out.txt' }),
        call('5', 'bash', { command: 'rm -rf build' }),
        call('6', 'bash', { command: 'mv a b' }),
      ),
      tool(
        result('1', 'bash', false),
        result('2', 'bash', true),
        result('3', 'bash', false),
        result('4', 'bash', true),
        result('5', 'bash', true),
      ),
    ];
    expect(filesModifiedFromToolLog(messages)).toEqual({
      files: [],
      possiblyChangedByCommands: ["sed -i 's/a/b/' main.go", 'echo hi > out.txt', 'rm -rf build'],
    });
  });
});

describe('looksLikeWritingCommand', () => {
  it.each([
    'echo x > file',
    'cat >> log.txt',
    'ls | tee out',
    "sed -i 's/x/y/' a",
    "sed -i.bak -e 's/x/y/' a",
    "perl -pi -e 's/x/y/' a",
    'mv a b',
    'cd src && rm old.ts',
    'cp a b',
    'touch new',
    'mkdir -p dir',
    'git checkout -- file',
    'git apply patch.diff',
    'npx prettier --write .',
    'npx biome check --fix',
    'gofmt -w .',
  ])('counts %s', (command) => {
    expect(looksLikeWritingCommand(command)).toBe(true);
  });

  it.each([
    'go test ./...',
    'npm test 2>&1',
    'make >/dev/null 2>&1',
    'cmd &> /dev/null',
    'grep -n "a > b" file',
    "echo 'rm -rf /'",
    'ls -la',
    'git status',
    'git diff HEAD',
    'sed -n 1,20p file',
    'grep -w word file',
    'npm run format-check',
    'node -e "x => x"',
  ])('does not count %s', (command) => {
    expect(looksLikeWritingCommand(command)).toBe(false);
  });
});

describe('renderFilesModified', () => {
  it('lists every path with its latest changes, then the commands', () => {
    const text = renderFilesModified({
      files: [
        { path: 'a.ts', changes: ['c1', 'c2', 'c3', 'c4', 'c5', 'c6', 'c7'] },
        { path: 'b\nc.ts', changes: ['written (3 bytes)'] },
      ],
      possiblyChangedByCommands: ['rm x'],
    });
    expect(text).toBe(
      [
        '- a.ts — (2 earlier changes); c3; c4; c5; c6; c7',
        '- b\\nc.ts — written (3 bytes)',
        '',
        'Commands that may have changed files (not tracked per file):',
        '- `rm x`',
      ].join('\n'),
    );
  });

  it('says so when nothing was changed', () => {
    expect(renderFilesModified({ files: [], possiblyChangedByCommands: [] })).toBe(NO_FILES_MODIFIED);
  });
});

describe('pairToolCalls', () => {
  it('keeps call order and the first result of each id', () => {
    const pairs = pairToolCalls([
      assistant(call('a', 'bash', {}), call('b', 'bash', {})),
      tool(result('b', 'bash', true, 'first'), result('b', 'bash', false, 'second')),
    ]);
    expect(pairs.map((pair) => [pair.call.toolCallId, pair.result?.output.value])).toEqual([
      ['a', undefined],
      ['b', 'first'],
    ]);
  });
});

/** One generated tool call: which tool, on which path, and what happened to it. */
interface Op {
  tool: 'file-write' | 'file-edit' | 'bash' | 'file-read';
  path: string;
  outcome: 'ok' | 'error' | 'unanswered';
}

const PATHS = ['a.ts', 'src/b.ts', 'src/b.ts ', 'docs/é😀.md', 'c'];
const opArb: fc.Arbitrary<Op> = fc.record({
  tool: fc.constantFrom('file-write', 'file-edit', 'bash', 'file-read'),
  path: fc.constantFrom(...PATHS),
  outcome: fc.constantFrom('ok', 'error', 'unanswered'),
});

/** Builds a log from ops: calls in batches, with each batch's results shuffled into a later message. */
function toolLog(ops: Op[], batch: number, reverse: boolean): StoredMessage[] {
  const messages: StoredMessage[] = [];
  for (let start = 0; start < ops.length; start += batch) {
    const ids = ops.slice(start, start + batch).map((_, i) => `id-${start + i}`);
    messages.push(
      assistant(
        ...ids.map((id, i) => {
          const op = ops[start + i];
          const input =
            op.tool === 'file-edit'
              ? { path: op.path, old_string: 'x', new_string: 'y' }
              : op.tool === 'bash'
                ? { command: `echo > ${op.path}` }
                : { path: op.path, content: 'text' };
          return call(id, op.tool, input);
        }),
      ),
    );
    const results = ids
      .map((id, i) => ({ id, op: ops[start + i] }))
      .filter(({ op }) => op.outcome !== 'unanswered')
      .map(({ id, op }) => result(id, op.tool, op.outcome === 'ok'));
    if (results.length > 0) messages.push(tool(...(reverse ? results.reverse() : results)));
  }
  return messages;
}

describe('filesModifiedFromToolLog (property)', () => {
  it('equals the successfully written or edited paths, in first-success order, one change per success', () => {
    fc.assert(
      fc.property(
        fc.array(opArb, { maxLength: 40 }),
        fc.integer({ min: 1, max: 4 }),
        fc.boolean(),
        (ops, batch, reverse) => {
          const successes = ops.filter(
            (op) => (op.tool === 'file-write' || op.tool === 'file-edit') && op.outcome === 'ok',
          );
          const expectedPaths = [...new Set(successes.map((op) => op.path))];
          const { files, possiblyChangedByCommands } = filesModifiedFromToolLog(toolLog(ops, batch, reverse));
          expect(files.map((file) => file.path)).toEqual(expectedPaths);
          for (const file of files) {
            expect(file.changes).toHaveLength(successes.filter((op) => op.path === file.path).length);
          }
          const ranCommands = ops.filter((op) => op.tool === 'bash' && op.outcome !== 'unanswered');
          expect(possiblyChangedByCommands).toEqual([
            ...new Set(ranCommands.map((op) => `echo > ${op.path}`)),
          ]);
          const rendered = renderFilesModified({ files, possiblyChangedByCommands });
          for (const path of expectedPaths) expect(rendered).toContain(`- ${path} — `);
        },
      ),
      { numRuns: 500 },
    );
  });
});
