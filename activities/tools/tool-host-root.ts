/**
 * The workspace root of a tools worker (`goalrun worker --role tools --workspace-root DIR`). The root
 * names the worker's queue, and it is also a boundary: a goal whose workspace is not inside it (a
 * typo, a goal routed to the wrong host, `/`) gets no tool run on this host, only a refusal the model
 * and the person reading the transcript can see.
 */
import { realpath } from 'node:fs/promises';
import path from 'node:path';
import { isWithin } from '../sandbox/bwrap-args';
import { realOfMissing } from './workspace-boundary';

/** The real path of a workspace: every symlink followed, a missing tail kept as given. */
async function realWorkspace(workspace: string): Promise<string> {
  const lexical = path.resolve(workspace);
  try {
    return await realpath(lexical);
  } catch {
    return realOfMissing(lexical);
  }
}

/**
 * Null when a goal's workspace (its real path) is inside the tool host's root (a real path), else the
 * refusal that names the rule. A missing workspace inside the root passes: the tool says it is missing.
 */
export async function toolHostRootRefusal(workspace: string, root: string): Promise<string | null> {
  const real = await realWorkspace(workspace);
  if (isWithin(real, root)) return null;
  const via = real === workspace ? '' : ` (it resolves to ${real})`;
  return (
    `outside the tool host's workspace root: the goal's workspace ${workspace}${via} is not under ${root}; ` +
    `this tools worker (goalrun worker --role tools --workspace-root ${root}) runs tools only for goals ` +
    'whose workspace is inside its root, so nothing was run'
  );
}
