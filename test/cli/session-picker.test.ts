/**
 * The `resume` picker in a real terminal (issue 31): tmux at 80 columns, sessions whose objectives
 * are longer than a row and carry CJK, emoji and an escape sequence. Every row fits its line, so the
 * arrow keys redraw in place: the header is on screen once after any number of key presses, and the
 * escape sequence shows as text.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { projectHash } from '../../store/session-id';
import type { SessionStore } from '../../store/types';
import { CLI, cliEnv, tempDir, waitFor } from '../support/cli';
import { testStore } from '../support/goal-env';

const COLUMNS = 80;
const HEADER = 'resume which session?';
const tmuxSession = `goalrun-picker-${process.pid}`;

function tmux(...args: string[]): string {
  return execFileSync('tmux', ['-L', tmuxSession, ...args], { encoding: 'utf8' });
}

/** The visible screen, one string per row. */
function screen(): string[] {
  return tmux('capture-pane', '-p', '-t', tmuxSession).split('\n');
}

describe('the resume picker in an 80-column terminal', () => {
  const databaseUrl = inject('databaseUrl');
  const home = tempDir('picker-home');
  const project = fs.realpathSync(tempDir('picker-project'));
  const objectives = [
    `整理构建脚本并修复所有失败的测试用例，然后更新文档说明新的发布流程和注意事项 😀😀😀 ${'long '.repeat(10)}`,
    `Refactor the release pipeline so that every artifact is signed and verified before upload 🚀 ${'x'.repeat(40)}`,
    '\x1b]0;pwned\x07\x1b[2J after the escape',
    `Short one with an emoji 👨‍👩‍👧‍👦 and Japanese テスト ${'y'.repeat(60)}`,
    'the oldest session',
  ];
  let store: SessionStore;

  beforeAll(async () => {
    store = await testStore(databaseUrl);
    const hash = projectHash(project);
    // Created oldest first, a second apart: the picker lists the newest first.
    for (const [index, objective] of [...objectives].reverse().entries()) {
      const id = `${hash}-2026010${index + 1}T000000000Z`;
      await store.createSession({
        id,
        projectDir: project,
        projectHash: hash,
        objective,
        model: 'scripted:x',
        workflowId: `goal-${id}`,
      });
    }
    const env = cliEnv({ GOALRUN_HOME: home, DATABASE_URL: databaseUrl, TERM: 'xterm-256color' });
    const exports = Object.entries(env)
      .filter(([name]) => /^(PATH|HOME|GOALRUN_HOME|DATABASE_URL|TERM|LANG|LC_ALL)$/.test(name))
      .map(([name, value]) => `${name}=${JSON.stringify(value)}`)
      .join(' ');
    const script = path.join(home, 'picker.sh');
    fs.writeFileSync(
      script,
      `cd ${JSON.stringify(project)} && env ${exports} LANG=C.UTF-8 ${JSON.stringify(process.execPath)} ${JSON.stringify(CLI)} resume; echo "picker exited $?"; sleep 600\n`,
    );
    tmux('new-session', '-d', '-s', tmuxSession, '-x', String(COLUMNS), '-y', '30', `bash ${script}`);
    await waitFor('the picker', () => screen().some((row) => row.includes(HEADER)), 60_000);
  });

  afterAll(async () => {
    try {
      tmux('kill-server');
    } catch {
      // Already gone.
    }
    await store?.close();
  });

  it('redraws in place on the arrow keys: one header, one row per session, none wider than the terminal', async () => {
    for (let press = 1; press <= 3; press += 1) {
      tmux('send-keys', '-t', tmuxSession, 'Down');
      const marked = `> ${press + 1}.`;
      await waitFor(
        `row ${press + 1} selected`,
        () => screen().some((row) => row.startsWith(marked)),
        20_000,
      );
    }
    const rows = screen();
    expect(rows.filter((row) => row.includes(HEADER))).toHaveLength(1);
    const listed = rows.filter((row) => /^[> ] \d+\. /.test(row));
    expect(listed.map((row) => row.slice(2, 4))).toEqual(['1.', '2.', '3.', '4.', '5.']);
    // The header is the row just above the first session: nothing was printed twice.
    expect(rows.indexOf(listed[0]) - 1).toBe(rows.findIndex((row) => row.includes(HEADER)));
    // Clipped rows end in an ellipsis; none wrapped onto a second line.
    expect(listed.filter((row) => row.endsWith('…')).length).toBeGreaterThanOrEqual(3);
    // The escape sequence of a hostile objective is shown, not obeyed (the title stays, the screen too).
    expect(rows.join('\n')).toContain('\\x1b]0;');
    expect(tmux('display-message', '-p', '-t', tmuxSession, '#{pane_title}')).not.toContain('pwned');
  });

  it('cancels with Esc and says that no session was picked', async () => {
    tmux('send-keys', '-t', tmuxSession, 'Escape');
    await waitFor(
      'the picker to exit',
      () => screen().some((row) => row.startsWith('picker exited')),
      20_000,
    );
    const rows = screen();
    expect(rows.join('\n')).toMatch(/no session picked/);
    expect(rows.find((row) => row.startsWith('picker exited'))).toBe('picker exited 2');
  });
});
