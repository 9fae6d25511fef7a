/**
 * The patch registry (workflows/patches.ts) follows Temporal's procedure against what every release
 * shipped (test/fixtures/histories/<version>/patches.json): no id vanishes, removal only after a
 * release shipped the id deprecated, every id names the release that added it, new ones at the end.
 * The rules themselves are unit-tested in test/core/patch-procedure.test.ts.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { compareReleases, patchProcedureProblems } from '../../core/patch-procedure';
import { expandPatchSets, PATCH_SETS } from '../../workflows/patch-sets';
import { PATCH, PATCHES, RELEASES } from '../../workflows/patches';
import { releaseFolders, releasePatches } from '../support/history-fixtures';

const ROOT = path.resolve(__dirname, '../..');
const shipped = releaseFolders().map(releasePatches);
/** An import of the SDK's patch calls (comments may name them freely). */
const IMPORTS_PATCH_API =
  /import\s*\{[^}]*\b(patched|deprecatePatch)\b[^}]*\}\s*from\s*'@temporalio\/workflow'/;

describe('the patch registry', () => {
  it('follows the patch procedure against every release that shipped', () => {
    expect(patchProcedureProblems(PATCHES, RELEASES, shipped)).toEqual([]);
  });

  it('lists every PATCH id, and the releases end with this build', () => {
    const ids = PATCHES.map((patch) => patch.id);
    for (const id of Object.values(PATCH)) expect(ids).toContain(id);
    const version = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')).version;
    expect(RELEASES.at(-1)).toBe(version);
    expect([...RELEASES].sort(compareReleases)).toEqual(RELEASES);
  });

  it('has a release folder of histories for every named release before this one', () => {
    const folders = releaseFolders();
    for (const release of RELEASES.slice(0, -1)) expect(folders).toContain(release);
    for (const release of shipped) {
      for (const patch of release.patches) {
        const record = PATCHES.find((p) => p.id === patch.id);
        expect(
          record && compareReleases(record.addedIn, release.release) <= 0,
          `${patch.id} in ${release.release}`,
        ).toBe(true);
      }
    }
  });

  it('is asked only through featuresOfThisRun: no patched() or deprecatePatch() elsewhere', () => {
    const callers: string[] = [];
    const walk = (dir: string) => {
      for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
        const file = path.join(dir, entry.name);
        if (entry.isDirectory()) walk(file);
        else if (file.endsWith('.ts') && IMPORTS_PATCH_API.test(fs.readFileSync(file, 'utf8'))) {
          callers.push(path.relative(ROOT, file));
        }
      }
    };
    walk(path.join(ROOT, 'workflows'));
    expect(callers).toEqual(['workflows/features.ts']);
  });

  it('has patch sets that cover only known patches of their release, and expand to the patches they stand for', () => {
    const byId = new Map(PATCHES.map((patch) => [patch.id, patch]));
    const setIds = PATCH_SETS.map((set) => set.id);
    expect(new Set(setIds).size).toBe(setIds.length);
    for (const set of PATCH_SETS) {
      expect(byId.has(set.id), `${set.id} is also a patch id`).toBe(false);
      expect(RELEASES).toContain(set.addedIn);
      for (const id of set.covers) {
        const patch = byId.get(id);
        expect(patch, `${set.id} covers unknown ${id}`).toBeDefined();
        expect(compareReleases(patch?.addedIn ?? '', set.addedIn), `${id} in ${set.id}`).toBeLessThanOrEqual(
          0,
        );
      }
    }
    expect(expandPatchSets([PATCH_SETS[0].id, 'later-patch'])).toEqual([
      ...PATCH_SETS[0].covers,
      'later-patch',
    ]);
    expect(expandPatchSets(['command-queue'])).toEqual(['command-queue']);
  });
});
