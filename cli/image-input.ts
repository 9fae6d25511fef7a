/**
 * `--image FILE` (repeatable) of `run` and `start`: each file is checked (a PNG, JPEG, GIF or WebP by
 * its first bytes, under IMAGE_MAX_BYTES), the model's card must say it takes images, and the bytes
 * are stored in the session store before the goal starts: the goal carries only their ids.
 */
import fs from 'node:fs';
import path from 'node:path';
import { CARD_EXTENSION, USER_CARDS_SUBDIR, userCardDirs } from '../activities/models/card-names';
import { resolveCard } from '../activities/models/catalog';
import { parseModelSpec } from '../activities/providers/spec';
import { ConfigError } from '../core/errors';
import type { GoalDefinition } from '../core/goal';
import type { ImagePart } from '../core/messages';
import { takesImages } from '../core/model-card';
import type { SessionStore } from '../store/types';

/** The largest image accepted: Anthropic's limit for one image (OpenAI's is higher). */
export const IMAGE_MAX_BYTES = 5 * 1024 * 1024;
/** The most images one goal's first message takes. */
export const IMAGE_MAX_COUNT = 20;

/** The image formats every provider takes, each known by its first bytes. */
const SIGNATURES: ReadonlyArray<{ mediaType: string; matches: (head: Buffer) => boolean }> = [
  {
    mediaType: 'image/png',
    matches: (head) =>
      head.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])),
  },
  { mediaType: 'image/jpeg', matches: (head) => head.subarray(0, 3).equals(Buffer.from([0xff, 0xd8, 0xff])) },
  {
    mediaType: 'image/gif',
    matches: (head) => ['GIF87a', 'GIF89a'].includes(head.subarray(0, 6).toString('latin1')),
  },
  {
    mediaType: 'image/webp',
    matches: (head) =>
      head.subarray(0, 4).toString('latin1') === 'RIFF' && head.subarray(8, 12).toString('latin1') === 'WEBP',
  },
];

/** An image file read and checked, not stored yet. */
export interface ImageFile {
  name: string;
  mediaType: string;
  data: Buffer;
}

/**
 * Reads and checks the `--image` files for a goal on `model`: throws ConfigError (exit 2) for a
 * missing, empty, oversized or unknown file, too many files, or a model whose card does not say it
 * takes images. Returns [] when there are none.
 */
export function readImageFiles(
  files: readonly string[] | undefined,
  model: string,
  home: string,
): ImageFile[] {
  if (!files || files.length === 0) return [];
  if (files.length > IMAGE_MAX_COUNT) {
    throw new ConfigError(
      `--image was given ${files.length} times; at most ${IMAGE_MAX_COUNT} images are accepted`,
    );
  }
  const images = files.map(readImageFile);
  const problem = imagesRefusal(model, home);
  if (problem) throw new ConfigError(problem);
  return images;
}

/** Why the model cannot be sent images, or null when its card says it takes them. */
export function imagesRefusal(model: string, home: string): string | null {
  const parsed = parseModelSpec(model);
  const resolved = resolveCard(parsed, { overlayDirs: userCardDirs(home) });
  if (takesImages(resolved.card)) return null;
  const file = path.join(home, USER_CARDS_SUBDIR, parsed.provider, `${parsed.model}${CARD_EXTENSION}`);
  const which =
    resolved.match === 'generic' ? 'it has no model card' : 'its model card does not list "image" in "input"';
  return `--image: ${resolved.spec} is not known to take images (${which}). If it does, say so in a card at ${file}: "input": ["text", "image"] (see docs/configuration.md)`;
}

/** Stores the images under the session and returns the goal with their references. */
export async function withStoredImages(
  openStore: () => Promise<Pick<SessionStore, 'storeImage'>>,
  goal: GoalDefinition,
  images: readonly ImageFile[],
): Promise<GoalDefinition> {
  // Without images the store is not opened here: a start that fails on Temporal must not start a store first.
  if (images.length === 0) return goal;
  const store = await openStore();
  const parts: ImagePart[] = [];
  for (const image of images) {
    const ref = await store.storeImage(goal.sessionId, { mediaType: image.mediaType, data: image.data });
    parts.push({ type: 'image', ...ref, name: image.name });
  }
  return { ...goal, images: parts };
}

function readImageFile(file: string): ImageFile {
  let stat: fs.Stats;
  try {
    stat = fs.statSync(file);
  } catch (err) {
    throw new ConfigError(
      `--image: cannot read ${file}: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (err as Error).message}`,
    );
  }
  if (!stat.isFile()) throw new ConfigError(`--image: ${file} is not a file`);
  if (stat.size === 0) throw new ConfigError(`--image: ${file} is empty`);
  if (stat.size > IMAGE_MAX_BYTES) {
    throw new ConfigError(
      `--image: ${file} has ${stat.size} bytes; at most ${IMAGE_MAX_BYTES} (${IMAGE_MAX_BYTES / 1024 / 1024} MiB) are accepted`,
    );
  }
  let data: Buffer;
  try {
    data = fs.readFileSync(file);
  } catch (err) {
    throw new ConfigError(`--image: cannot read ${file}: ${(err as Error).message}`);
  }
  const signature = SIGNATURES.find((candidate) => candidate.matches(data));
  if (!signature) {
    throw new ConfigError(
      `--image: ${file} is not a PNG, JPEG, GIF or WebP image (judged by its first bytes)`,
    );
  }
  return { name: path.basename(file), mediaType: signature.mediaType, data };
}
