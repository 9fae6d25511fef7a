/**
 * Issue 24 §1: the one reader of the untrusted workspace. On real files: it reads a regular file
 * inside its root; it refuses a link at any component (the file, a directory on the way), a path
 * that leaves the root, a FIFO (which would block a naive read), and a config file over its cap; it
 * cuts an instruction file at its cap; a refusal is a note naming the file, never an exception.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  insideRoots,
  readWorkspaceFileSync,
  workspaceEntry,
} from '../../activities/workspace-files/read-workspace-file';
import { WORKSPACE_FILE_RULES } from '../../activities/workspace-files/trust-rules';
import { tempDir } from '../support/cli';

function setup() {
  const root = tempDir('reader-ws');
  const outside = tempDir('reader-host');
  const secret = path.join(outside, 'secret.txt');
  fs.writeFileSync(secret, 'HOST SECRET\n');
  return { root, outside, secret };
}

describe('the workspace reader', () => {
  it('reads a regular file inside the root, with its digest', () => {
    const { root } = setup();
    fs.mkdirSync(path.join(root, '.goalrun'));
    fs.writeFileSync(path.join(root, '.goalrun', 'config.json'), '{"max_steps": 3}');
    const read = readWorkspaceFileSync(root, '.goalrun/config.json', 'project-config');
    expect(read).toMatchObject({ ok: true, text: '{"max_steps": 3}', bytes: 16, cut: false });
    expect(read.ok && read.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(readWorkspaceFileSync(root, 'nothing.json', 'project-config')).toEqual({
      ok: false,
      missing: true,
    });
  });

  it('refuses a link as the file and as a directory on the way, with a note naming it', () => {
    const { root, outside, secret } = setup();
    fs.symlinkSync(secret, path.join(root, 'AGENTS.md'));
    const file = readWorkspaceFileSync(root, 'AGENTS.md', 'instructions');
    expect(file).toMatchObject({ ok: false, missing: false });
    expect(!file.ok && !file.missing && file.note).toMatch(/^AGENTS\.md is a symbolic link; not read/);

    fs.writeFileSync(path.join(outside, 'AGENTS.md'), 'HOST DIR\n');
    fs.symlinkSync(outside, path.join(root, 'd'));
    const through = readWorkspaceFileSync(root, 'd/AGENTS.md', 'instructions');
    expect(!through.ok && !through.missing && through.note).toMatch(
      /d\/AGENTS\.md is a symbolic link \(d is one\)/,
    );

    // A link inside the workspace to a file inside it is refused all the same: no link is followed.
    fs.writeFileSync(path.join(root, 'CLAUDE.md'), 'inside\n');
    fs.symlinkSync('CLAUDE.md', path.join(root, 'OTHER.md'));
    expect(readWorkspaceFileSync(root, 'OTHER.md', 'instructions').ok).toBe(false);
    expect(workspaceEntry(root, 'OTHER.md')).toEqual({ entry: 'link', at: 'OTHER.md' });
  });

  it('refuses a path that climbs out of the root, and a FIFO, without blocking', () => {
    const { root } = setup();
    const climb = readWorkspaceFileSync(root, '../secret.txt', 'project-config');
    expect(climb.ok).toBe(false);
    execFileSync('mkfifo', [path.join(root, 'pipe.json')]);
    const fifo = readWorkspaceFileSync(root, 'pipe.json', 'project-mcp');
    expect(!fifo.ok && !fifo.missing && fifo.note).toMatch(/pipe\.json is not a regular file/);
  });

  it('refuses a config file over its cap and cuts an instruction file at its cap', () => {
    const { root } = setup();
    const cap = WORKSPACE_FILE_RULES['project-config'].maxBytes;
    fs.writeFileSync(path.join(root, 'big.json'), 'x'.repeat(cap + 1));
    const big = readWorkspaceFileSync(root, 'big.json', 'project-config');
    expect(!big.ok && !big.missing && big.note).toMatch(
      new RegExp(`has ${cap + 1} bytes; goalrun reads at most ${cap}`),
    );
    const instructionsCap = WORKSPACE_FILE_RULES.instructions.maxBytes;
    fs.writeFileSync(path.join(root, 'AGENTS.md'), 'y'.repeat(instructionsCap + 10));
    const cut = readWorkspaceFileSync(root, 'AGENTS.md', 'instructions');
    expect(cut).toMatchObject({ ok: true, bytes: instructionsCap + 10, cut: true });
    expect(cut.ok && cut.text.length).toBe(instructionsCap);
  });

  it('tells a file the user named inside the workspace or a writable root from one outside', () => {
    const { root, secret } = setup();
    fs.writeFileSync(path.join(root, 'mcp.json'), '{}');
    expect(insideRoots(path.join(root, 'mcp.json'), [root])).toMatchObject({ relative: 'mcp.json' });
    expect(insideRoots(secret, [root])).toBeNull();
    // A link outside the workspace that leads into it counts as inside: the model can write its target.
    const link = path.join(tempDir('reader-link'), 'mcp.json');
    fs.symlinkSync(path.join(root, 'mcp.json'), link);
    expect(insideRoots(link, [root])).toMatchObject({ relative: 'mcp.json' });
  });
});
