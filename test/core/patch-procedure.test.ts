import { describe, expect, it } from 'vitest';
import {
  buildOfRun,
  compareReleases,
  markersOfRelease,
  type PatchEntry,
  patchIdOfMarker,
  patchProcedureProblems,
} from '../../core/patch-procedure';

const RELEASES = ['0.1.0', '0.2.0', '0.3.0'];
const legacy: PatchEntry = {
  id: 'legacy',
  addedIn: 'pre-release',
  stage: 'removed',
  removedIn: 'pre-release',
};
const a: PatchEntry = { id: 'a', addedIn: '0.1.0', stage: 'patched' };
const b: PatchEntry = { id: 'b', addedIn: '0.2.0', stage: 'patched' };

describe('compareReleases', () => {
  it('orders pre-release, pre-X, X and numeric parts by number', () => {
    const sorted = ['0.10.0', '0.2.0', 'pre-0.1.0', '0.1.0', 'pre-release', '1.0.0'].sort(compareReleases);
    expect(sorted).toEqual(['pre-release', 'pre-0.1.0', '0.1.0', '0.2.0', '0.10.0', '1.0.0']);
  });
});

describe('patchProcedureProblems', () => {
  it('accepts a registry that follows the procedure', () => {
    const registry: PatchEntry[] = [
      legacy,
      { id: 'a', addedIn: '0.1.0', stage: 'removed', deprecatedIn: '0.2.0', removedIn: '0.3.0' },
      b,
    ];
    const shipped = [
      { release: '0.1.0', patches: [{ id: 'a', stage: 'patched' as const }] },
      {
        release: '0.2.0',
        patches: [
          { id: 'a', stage: 'deprecated' as const },
          { id: 'b', stage: 'patched' as const },
        ],
      },
    ];
    expect(patchProcedureProblems(registry, RELEASES, shipped)).toEqual([]);
  });

  it('fails when a shipped id disappears from the registry', () => {
    const shipped = [{ release: '0.1.0', patches: [{ id: 'a', stage: 'patched' as const }] }];
    expect(patchProcedureProblems([b], RELEASES, shipped).join('\n')).toMatch(/a: shipped by 0\.1\.0.*gone/);
  });

  it('fails when an id is removed without an earlier release that shipped it deprecated', () => {
    const removedAtOnce: PatchEntry = { id: 'a', addedIn: '0.1.0', stage: 'removed', removedIn: '0.3.0' };
    expect(patchProcedureProblems([removedAtOnce], RELEASES, []).join('\n')).toMatch(/without deprecatedIn/);
    const claimed: PatchEntry = { ...removedAtOnce, deprecatedIn: '0.2.0' };
    const shipped = [{ release: '0.2.0', patches: [{ id: 'a', stage: 'patched' as const }] }];
    expect(patchProcedureProblems([claimed], RELEASES, shipped).join('\n')).toMatch(
      /no earlier release's patches.json shipped it deprecated/,
    );
  });

  it('fails on a missing or unknown addedIn, a deprecation in the adding release, and an id listed twice', () => {
    const problems = patchProcedureProblems(
      [
        { id: 'x', addedIn: '', stage: 'patched' },
        { id: 'y', addedIn: '9.9.9', stage: 'patched' },
        { id: 'z', addedIn: '0.2.0', stage: 'deprecated', deprecatedIn: '0.2.0' },
        { id: 'z', addedIn: '0.2.0', stage: 'patched' },
      ],
      RELEASES,
      [],
    ).join('\n');
    expect(problems).toMatch(/x: no addedIn/);
    expect(problems).toMatch(/y: addedIn 9\.9\.9 is not a release/);
    expect(problems).toMatch(/z: deprecated in 0\.2\.0, not after it was added/);
    expect(problems).toMatch(/z: listed twice/);
  });

  it('fails when a new patch is not appended at the end', () => {
    expect(patchProcedureProblems([b, a], RELEASES, []).join('\n')).toMatch(/a: listed after b/);
  });

  it('fails when a shipped deprecation goes back to patched', () => {
    const shipped = [{ release: '0.2.0', patches: [{ id: 'a', stage: 'deprecated' as const }] }];
    expect(patchProcedureProblems([a], RELEASES, shipped).join('\n')).toMatch(/cannot go back to patched/);
  });
});

describe('buildOfRun', () => {
  const registry = [legacy, a, b];

  it('names the release whose markers a run recorded', () => {
    expect(markersOfRelease(registry, '0.1.0')).toEqual(['a']);
    expect(buildOfRun(['a', 'b'], registry, ['0.1.0', '0.2.0'])).toMatchObject({
      release: '0.2.0',
      releasesBehind: 0,
    });
    expect(buildOfRun(['a'], registry, ['0.1.0', '0.2.0'])).toMatchObject({
      release: '0.1.0',
      releasesBehind: 1,
    });
  });

  it('counts a run without markers as older than the first release, and flags removed and unknown markers', () => {
    expect(buildOfRun([], registry, ['0.1.0', '0.2.0'])).toMatchObject({
      release: 'pre-0.1.0',
      releasesBehind: 2,
    });
    expect(buildOfRun(['legacy'], registry, ['0.1.0', '0.2.0'])).toMatchObject({
      removedMarkers: ['legacy'],
    });
    expect(buildOfRun(['a', 'b', 'c'], registry, ['0.1.0', '0.2.0'])).toMatchObject({
      release: '0.2.0',
      unknownMarkers: ['c'],
    });
  });
});

describe('patchIdOfMarker', () => {
  const bytes = (text: string) => ({ payloads: [{ data: new TextEncoder().encode(text) }] });
  it('reads the id of a patch marker, as SDK core writes it now and as old SDKs did', () => {
    expect(patchIdOfMarker({ 'patch-data': bytes('{"id":"command-queue","deprecated":false}') })).toBe(
      'command-queue',
    );
    expect(patchIdOfMarker({ patch_id: bytes('old-style') })).toBe('old-style');
    expect(patchIdOfMarker({ 'patch-data': bytes('not json') })).toBeUndefined();
    expect(patchIdOfMarker(undefined)).toBeUndefined();
  });
});
