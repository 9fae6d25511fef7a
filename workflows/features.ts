/**
 * Which patched behaviours this run takes (see patches.ts). Asked once, when an execution starts,
 * so a run never mixes old and new decisions: a goal started by an older build replays its old
 * branches to the end of its run, and takes the new ones from its next continue-as-new or resume.
 */
import { deprecatePatch, patched } from '@temporalio/workflow';
import { PATCH_SETS } from './patch-sets';
import { PATCHES, type WorkflowFeatures } from './patches';

/**
 * Asks Temporal for the newest patch set a run has (a new run records the newest), then for every
 * patch the set does not cover, in the registry's order; call it once per execution.
 */
export function featuresOfThisRun(): WorkflowFeatures {
  const features: Record<string, boolean> = {};
  const covered = new Set<string>(PATCH_SETS.find((set) => patched(set.id))?.covers ?? []);
  for (const patch of PATCHES) {
    if (covered.has(patch.id)) {
      features[patch.id] = true;
    } else if (patch.stage === 'patched') {
      features[patch.id] = patched(patch.id);
    } else {
      // A deprecated patch still matches the marker of a run that recorded it; a removed one is gone.
      if (patch.stage === 'deprecated') deprecatePatch(patch.id);
      features[patch.id] = true;
    }
  }
  return features as WorkflowFeatures;
}
