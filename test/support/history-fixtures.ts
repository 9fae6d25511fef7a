/**
 * The committed goal histories, kept per release in test/fixtures/histories/<version>/: each file a
 * JSON array of histories (`History.toJSON()`), a `patches.json` naming the patch ids that release's
 * workflow asked for, and a `SHA256SUMS` of its history files. A history is never regenerated: a
 * release adds its recordings beside the older ones, and replay.test.ts replays them all against
 * today's code. Saving refuses to overwrite a file, and the checksums catch an edit by hand.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { temporal } from '@temporalio/proto';
import { compareReleases } from '../../core/patch-procedure';
import { PATCHES, RELEASES } from '../../workflows/patches';

/** Where the release folders live. */
export const HISTORY_FIXTURES = path.resolve(__dirname, '../fixtures/histories');
/** The file of each release folder that names its patches. */
export const PATCHES_FILE = 'patches.json';
/** The file of each release folder that pins its histories' bytes. */
export const CHECKSUMS_FILE = 'SHA256SUMS';

/** One patch as a release shipped it. */
export interface ShippedPatch {
  id: string;
  stage: 'patched' | 'deprecated';
}

/** What a release folder's patches.json says. */
export interface ReleasePatches {
  release: string;
  commit: string;
  recorded: string;
  patches: ShippedPatch[];
}

/** One history file of a release folder. */
export interface HistoryFixture {
  release: string;
  file: string;
  histories: unknown[];
}

/** The release folders, oldest first. */
export function releaseFolders(): string[] {
  return fs
    .readdirSync(HISTORY_FIXTURES, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort(compareReleases);
}

/** A release folder's patches.json. */
export function releasePatches(release: string): ReleasePatches {
  return JSON.parse(fs.readFileSync(path.join(HISTORY_FIXTURES, release, PATCHES_FILE), 'utf8'));
}

/** The history files of a release folder (every .json but patches.json). */
export function historyFiles(release: string): string[] {
  return fs
    .readdirSync(path.join(HISTORY_FIXTURES, release))
    .filter((file) => file.endsWith('.json') && file !== PATCHES_FILE)
    .sort();
}

/** Every committed history file, oldest release first. */
export function historyFixtures(): HistoryFixture[] {
  return releaseFolders().flatMap((release) =>
    historyFiles(release).map((file) => ({
      release,
      file,
      histories: JSON.parse(fs.readFileSync(path.join(HISTORY_FIXTURES, release, file), 'utf8')),
    })),
  );
}

/** The sha256 of a file, in hex. */
export function fileSha256(file: string): string {
  return createHash('sha256').update(fs.readFileSync(file)).digest('hex');
}

/** A release folder's SHA256SUMS, as file name → hex digest. */
export function recordedChecksums(release: string): Map<string, string> {
  const file = path.join(HISTORY_FIXTURES, release, CHECKSUMS_FILE);
  const sums = new Map<string, string>();
  if (!fs.existsSync(file)) return sums;
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    const match = /^([0-9a-f]{64}) [ *](.+)$/.exec(line.trim());
    if (match) sums.set(match[2], match[1]);
  }
  return sums;
}

/** Typed error of a save that would overwrite a committed history. */
export class HistoryExistsError extends Error {
  readonly type = 'history-exists';
}

/** A fetched history as the fixtures hold it (`fetchHistory` types it as the plain interface). */
export function historyJson(history: temporal.api.history.v1.IHistory): unknown {
  return temporal.api.history.v1.History.fromObject(history).toJSON();
}

/**
 * Saves new histories as `<release>/<name>.json` and adds the file to that folder's SHA256SUMS.
 * Refuses to overwrite: a committed history is never regenerated (record a new one beside it).
 */
export function saveHistoryFixture(release: string, name: string, histories: unknown[]): string {
  const dir = path.join(HISTORY_FIXTURES, release);
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${name}.json`);
  if (fs.existsSync(file)) {
    throw new HistoryExistsError(
      `${path.relative(process.cwd(), file)} exists; histories are never regenerated`,
    );
  }
  fs.writeFileSync(file, JSON.stringify(histories));
  if (!fs.existsSync(path.join(dir, PATCHES_FILE))) writeShippedPatches(release);
  fs.appendFileSync(path.join(dir, CHECKSUMS_FILE), `${fileSha256(file)}  ${name}.json\n`);
  return file;
}

/**
 * Writes a release folder's patches.json from this build's registry: what a release ships is what
 * its registry asks for (patched or deprecated ids). Only for this build's own version.
 */
function writeShippedPatches(release: string): void {
  if (release !== RELEASES.at(-1)) {
    throw new Error(
      `${release}/${PATCHES_FILE} is missing: write it by hand from that release's workflows/patches.ts`,
    );
  }
  const shipped: ReleasePatches = {
    release,
    commit: `(the commit tagged v${release})`,
    recorded: "by this release's tests (GOALRUN_SAVE_HISTORY_FIXTURE=1)",
    patches: PATCHES.filter((patch) => patch.stage !== 'removed').map((patch) => ({
      id: patch.id,
      stage: patch.stage as ShippedPatch['stage'],
    })),
  };
  fs.writeFileSync(
    path.join(HISTORY_FIXTURES, release, PATCHES_FILE),
    `${JSON.stringify(shipped, null, 2)}\n`,
  );
}
