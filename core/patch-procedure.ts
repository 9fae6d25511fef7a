/**
 * The rules of Temporal's patch procedure over goalrun's patch registry (workflows/patches.ts), and
 * which release a run's patch markers say started it. Pure: the registry, the releases and the
 * markers come in as values, so tests can feed it a registry that breaks a rule, and the CLI
 * (`goalrun upgrade-check`) can read a run's build from its history.
 *
 * Why the rules: a run replays its history on whatever build polls its queue. `patched(id)` records a
 * marker and lets a run without it take the old branch; `deprecatePatch(id)` takes the new branch
 * always (safe once no run of a build before the patch is left) and accepts the marker; removing
 * the call fails every run whose history holds a non-deprecated marker (TMPRL1100). So an id goes
 * patched → deprecated → removed, one release apart at least, and never vanishes from the registry.
 */

/** Release label of builds before any release was named. */
export const PRE_RELEASE = 'pre-release';

/** A patch as the registry records it (structurally the registry's PatchRecord). */
export interface PatchEntry {
  id: string;
  addedIn: string;
  stage: 'patched' | 'deprecated' | 'removed';
  deprecatedIn?: string;
  removedIn?: string;
}

/** The ids one release shipped, and the stage each had there. */
export interface ShippedRelease {
  release: string;
  patches: ReadonlyArray<{ id: string; stage: 'patched' | 'deprecated' }>;
}

/**
 * Orders release names: `pre-release` first, `pre-X` just before `X`, numeric parts by number
 * (pre-0.1.0 < 0.1.0 < 0.2.0 < 0.10.0).
 */
export function compareReleases(a: string, b: string): number {
  if (a === b) return 0;
  if (a === PRE_RELEASE) return -1;
  if (b === PRE_RELEASE) return 1;
  const parse = (name: string) => {
    const pre = name.startsWith('pre-');
    return { parts: (pre ? name.slice(4) : name).split('.').map(Number), pre };
  };
  const x = parse(a);
  const y = parse(b);
  for (let i = 0; i < Math.max(x.parts.length, y.parts.length); i++) {
    const diff = (x.parts[i] ?? 0) - (y.parts[i] ?? 0);
    if (diff !== 0) return diff;
  }
  return Number(y.pre) - Number(x.pre);
}

/**
 * Every way the registry breaks the procedure, as one sentence each (empty when it follows it).
 * `releases` are the named releases, oldest first, the current (unreleased or just released) build
 * last; `shipped` what earlier releases recorded beside their histories.
 */
export function patchProcedureProblems(
  registry: readonly PatchEntry[],
  releases: readonly string[],
  shipped: readonly ShippedRelease[],
): string[] {
  const problems: string[] = [];
  const current = releases.at(-1) ?? PRE_RELEASE;
  const known = (release: string) => release === PRE_RELEASE || releases.includes(release);
  const byId = new Map<string, PatchEntry>();
  for (const patch of registry) {
    if (byId.has(patch.id)) problems.push(`${patch.id}: listed twice`);
    byId.set(patch.id, patch);
    if (!patch.addedIn) problems.push(`${patch.id}: no addedIn (the release that added it)`);
    else if (!known(patch.addedIn))
      problems.push(`${patch.id}: addedIn ${patch.addedIn} is not a release of RELEASES`);
    if (patch.stage !== 'patched' && !patch.deprecatedIn && patch.addedIn !== PRE_RELEASE) {
      problems.push(`${patch.id}: stage ${patch.stage} without deprecatedIn`);
    }
    if (patch.stage === 'removed' && !patch.removedIn)
      problems.push(`${patch.id}: removed without removedIn`);
    if (patch.stage === 'patched' && (patch.deprecatedIn || patch.removedIn)) {
      problems.push(`${patch.id}: stage patched, yet deprecatedIn/removedIn is set`);
    }
    for (const [field, value] of [
      ['deprecatedIn', patch.deprecatedIn],
      ['removedIn', patch.removedIn],
    ] as const) {
      if (value !== undefined && !known(value))
        problems.push(`${patch.id}: ${field} ${value} is not a release`);
    }
    // Deprecating in the release that added it would break the runs of the release before.
    if (patch.deprecatedIn && patch.addedIn && compareReleases(patch.deprecatedIn, patch.addedIn) <= 0) {
      problems.push(
        `${patch.id}: deprecated in ${patch.deprecatedIn}, not after it was added (${patch.addedIn})`,
      );
    }
    if (patch.removedIn && patch.removedIn !== PRE_RELEASE) {
      if (!patch.deprecatedIn || compareReleases(patch.removedIn, patch.deprecatedIn) <= 0) {
        problems.push(
          `${patch.id}: removed in ${patch.removedIn} without a release before it that shipped it deprecated`,
        );
      } else if (
        !shipped.some(
          (release) =>
            compareReleases(release.release, patch.removedIn as string) < 0 &&
            release.patches.some((p) => p.id === patch.id && p.stage === 'deprecated'),
        )
      ) {
        problems.push(
          `${patch.id}: removed in ${patch.removedIn}, but no earlier release's patches.json shipped it deprecated`,
        );
      }
    }
    if (patch.addedIn && compareReleases(patch.addedIn, current) > 0) {
      problems.push(`${patch.id}: added in ${patch.addedIn}, after this build (${current})`);
    }
  }
  // New patches go at the end: the registry is in the order the releases added them.
  for (let i = 1; i < registry.length; i++) {
    if (compareReleases(registry[i].addedIn, registry[i - 1].addedIn) < 0) {
      problems.push(`${registry[i].id}: listed after ${registry[i - 1].id}, a patch of a later release`);
    }
  }
  for (const release of shipped) {
    for (const patch of release.patches) {
      const now = byId.get(patch.id);
      if (!now) {
        problems.push(
          `${patch.id}: shipped by ${release.release} (${patch.stage}), gone from the registry: ` +
            `ids are never deleted; a removed patch keeps its record with stage 'removed'`,
        );
      } else if (patch.stage === 'deprecated' && now.stage === 'patched') {
        problems.push(`${patch.id}: ${release.release} shipped it deprecated; it cannot go back to patched`);
      }
    }
  }
  return problems;
}

/** The patch markers a run started by `release` records: each patch added by then and not yet removed. */
export function markersOfRelease(registry: readonly PatchEntry[], release: string): string[] {
  return registry
    .filter((patch) => compareReleases(patch.addedIn, release) <= 0)
    .filter((patch) => !patch.removedIn || compareReleases(patch.removedIn, release) > 0)
    .map((patch) => patch.id);
}

/** Which build started a run, read from its patch markers. */
export interface RunBuild {
  /** The newest release whose markers the run has all of, or `pre-<first release>`. */
  release: string;
  /** How many releases older than the current one (0: this release). */
  releasesBehind: number;
  /** Markers this build does not know: a newer build started the run. */
  unknownMarkers: string[];
  /** Markers of patches this build removed: the run cannot replay here. */
  removedMarkers: string[];
}

/** The build that started a run with these patch markers (read from the start of its history). */
export function buildOfRun(
  markers: readonly string[],
  registry: readonly PatchEntry[],
  releases: readonly string[],
): RunBuild {
  const have = new Set(markers);
  const known = new Map(registry.map((patch) => [patch.id, patch]));
  let index = -1;
  for (let i = releases.length - 1; i >= 0; i--) {
    if (markersOfRelease(registry, releases[i]).every((id) => have.has(id))) {
      index = i;
      break;
    }
  }
  return {
    release: index >= 0 ? releases[index] : `pre-${releases[0] ?? PRE_RELEASE}`,
    releasesBehind: index >= 0 ? releases.length - 1 - index : releases.length,
    unknownMarkers: markers.filter((id) => !known.has(id)),
    removedMarkers: markers.filter((id) => known.get(id)?.stage === 'removed'),
  };
}

/** The marker name Temporal's SDK core gives patch markers. */
export const PATCH_MARKER_NAME = 'core_patch';

/** The details of a MarkerRecorded event, as the protobuf types give them. */
export type MarkerDetails =
  | { [key: string]: { payloads?: Array<{ data?: Uint8Array | null }> | null } | null | undefined }
  | null
  | undefined;

/**
 * The patch id of a `core_patch` marker's details: `patch-data` holds JSON `{id, deprecated}` (SDK core
 * writes it outside any payload codec); markers of old SDKs hold the id as plain bytes in `patch_id`.
 */
export function patchIdOfMarker(details: MarkerDetails): string | undefined {
  const text = (key: string) => {
    const data = details?.[key]?.payloads?.[0]?.data;
    return data ? new TextDecoder().decode(data) : undefined;
  };
  const json = text('patch-data');
  if (json !== undefined) {
    try {
      const id = (JSON.parse(json) as { id?: unknown }).id;
      return typeof id === 'string' ? id : undefined;
    } catch {
      return undefined;
    }
  }
  return text('patch_id');
}
