/**
 * Issue 24 §1: docs/security.md states the rule as one table (file → who may write it → what it may
 * change), and every row has its test. Kept true here: one row per kind of workspace file the reader
 * knows, the caps it states are the reader's, and every test a row names exists.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { WORKSPACE_FILE_KINDS, WORKSPACE_FILE_RULES } from '../../activities/workspace-files/trust-rules';

const REPO = path.resolve(__dirname, '../..');

/** The rows of the table under "What the workspace may change", as cells. */
function trustTable(): string[][] {
  const doc = fs.readFileSync(path.join(REPO, 'docs', 'security.md'), 'utf8');
  const section = doc.split('## What the workspace may change')[1]?.split('\n## ')[0] ?? '';
  const rows = section
    .split('\n')
    .filter((line) => line.startsWith('|'))
    .map((line) =>
      line
        .slice(1, -1)
        .split(/(?<!\\)\|/)
        .map((cell) => cell.trim()),
    );
  // The header and its rule.
  return rows.slice(2);
}

describe('the trust table of docs/security.md', () => {
  const rows = trustTable();

  it('has four columns, the last naming tests that exist', () => {
    expect(rows.length).toBeGreaterThanOrEqual(WORKSPACE_FILE_KINDS.length);
    for (const row of rows) {
      expect(row, row.join(' | ')).toHaveLength(4);
      const tests = [...row[3].matchAll(/`(test\/[^`]+\.test\.ts)`/g)].map((match) => match[1]);
      expect(tests.length, `row "${row[0]}" names no test`).toBeGreaterThan(0);
      for (const file of tests) expect(fs.existsSync(path.join(REPO, file)), file).toBe(true);
    }
  });

  it('has a row for every kind of file the reader reads, with its cap', () => {
    for (const kind of WORKSPACE_FILE_KINDS) {
      const rule = WORKSPACE_FILE_RULES[kind];
      const row = rows.find((cells) => cells[0].startsWith(`\`${rule.docKey}`));
      expect(row, `no row for ${rule.docKey}`).toBeDefined();
    }
    const config = rows.find((cells) => cells[0].startsWith('`.goalrun/config.json`'));
    expect(config?.[2]).toContain(`${WORKSPACE_FILE_RULES['project-config'].maxBytes / 1024} KiB`);
    const instructions = rows.find((cells) => cells[0].startsWith('`AGENTS.md`'));
    expect(instructions?.[2]).toContain(`${WORKSPACE_FILE_RULES.instructions.maxBytes / 1024} KiB`);
  });
});
