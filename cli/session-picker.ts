/**
 * The terminal picker of `goalrun resume` without an id: the project's recent sessions, chosen with
 * the arrow keys and Enter, or by typing its number. Esc, q or Ctrl-C picks nothing.
 */
import readline from 'node:readline';
import { terminalSafe } from '../core/text';
import type { SessionRow, SessionStore } from '../store/types';
import { sessionLine, summariesOf } from './session-summary';
import { clipToWidth } from './terminal-text';

/** Width assumed when the terminal does not say. */
const DEFAULT_COLUMNS = 80;

export { describeSessionLine } from './session-summary';

/** Lets the user pick one of `rows` on the terminal; null when they pick none. */
export async function pickSession(store: SessionStore, rows: SessionRow[]): Promise<SessionRow | null> {
  const lines = (await summariesOf(store, rows)).map(sessionLine);
  const input = process.stdin;
  const output = process.stderr;
  let selected = 0;
  // Every row is clipped to the terminal's width (in display columns), so each takes exactly one row
  // and moving up by the number of rows lands on the header: a row that wrapped made the picker
  // reprint its header on every key.
  const row = (text: string) =>
    `\x1b[2K${clipToWidth(terminalSafe(text), (output.columns || DEFAULT_COLUMNS) - 1)}\n`;
  const render = (first: boolean) => {
    if (!first) output.write(`\x1b[${lines.length + 1}A`);
    output.write(row('resume which session? (↑/↓ or a number, Enter; Esc cancels)'));
    lines.forEach((line, index) => {
      const mark = index === selected ? '>' : ' ';
      output.write(row(`${mark} ${index + 1}. ${line}`));
    });
  };
  return new Promise((resolve) => {
    readline.emitKeypressEvents(input);
    const wasRaw = input.isRaw;
    input.setRawMode(true);
    input.resume();
    const finish = (row: SessionRow | null) => {
      input.off('keypress', onKey);
      input.setRawMode(wasRaw);
      input.pause();
      resolve(row);
    };
    const onKey = (text: string | undefined, key: { name?: string; ctrl?: boolean } | undefined) => {
      if (key?.ctrl && key.name === 'c') return finish(null);
      if (key?.name === 'escape' || text === 'q') return finish(null);
      if (key?.name === 'return' || key?.name === 'enter') return finish(rows[selected]);
      if (key?.name === 'up') selected = (selected + rows.length - 1) % rows.length;
      else if (key?.name === 'down') selected = (selected + 1) % rows.length;
      else if (text && /^[1-9]$/.test(text) && Number(text) <= rows.length)
        return finish(rows[Number(text) - 1]);
      else return;
      render(false);
    };
    input.on('keypress', onKey);
    render(true);
  });
}
