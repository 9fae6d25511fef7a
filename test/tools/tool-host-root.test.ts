/**
 * The workspace root of a tools worker: goals whose workspace (its real path) is not inside it are
 * refused, whatever the path looks like.
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { toolHostRootRefusal } from '../../activities/tools/tool-host-root';

const base = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'goalrun-tool-host-root-')));
const root = path.join(base, 'srv');
const inside = path.join(root, 'project');
const outside = path.join(base, 'elsewhere');
mkdirSync(inside, { recursive: true });
mkdirSync(outside, { recursive: true });
// A prefix of the root's name is not the root: /…/srv-other is outside /…/srv.
mkdirSync(`${root}-other`);
symlinkSync(outside, path.join(root, 'link-out'));
symlinkSync(inside, path.join(outside, 'link-in'));

afterAll(() => rmSync(base, { recursive: true, force: true }));

describe('toolHostRootRefusal', () => {
  it('lets through the root, a workspace below it, and a missing one below it', async () => {
    for (const workspace of [
      root,
      inside,
      path.join(root, 'not-yet', 'made'),
      path.join(outside, 'link-in'),
    ]) {
      expect(await toolHostRootRefusal(workspace, root), workspace).toBeNull();
    }
  });

  it('refuses /, a sibling, a look-alike prefix, .. out of the root and a symlink leading out, naming the rule', async () => {
    for (const workspace of ['/', outside, `${root}-other`, path.join(inside, '..', '..', 'elsewhere')]) {
      const refusal = await toolHostRootRefusal(workspace, root);
      expect(refusal, workspace).toContain(
        `outside the tool host's workspace root: the goal's workspace ${workspace}`,
      );
      expect(refusal).toContain(`--workspace-root ${root}`);
      expect(refusal).toContain('nothing was run');
    }
    const linked = await toolHostRootRefusal(path.join(root, 'link-out'), root);
    expect(linked).toContain(`(it resolves to ${outside})`);
  });
});
