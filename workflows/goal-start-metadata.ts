/**
 * What a goal's workflow is started with besides its input: the Web UI's summary and details and the
 * search attributes `list` and the Web UI filter on. One place, so a goal `start` starts and one a
 * schedule starts (as a child workflow) look the same.
 */
import type { SearchAttributePair } from '@temporalio/common';
import type { GoalDefinition } from '../core/goal';
import { clipBytes, clipHead } from '../core/text';
import { escapeUiMarkdown } from '../core/ui-markdown';
import {
  GoalIterationKey,
  GoalModelKey,
  GoalSessionKey,
  GoalStatusKey,
  START_ITERATION,
} from './definitions';

/** The Web UI's one-line summary is capped at 200 bytes. */
const STATIC_SUMMARY_MAX_BYTES = 200;
/** The model is a Keyword search attribute: kept short. */
const MODEL_ATTRIBUTE_MAX_CHARS = 200;

/** The start options of a goal's workflow that describe it: summary, details and search attributes. */
export interface GoalStartMetadata {
  staticSummary: string;
  staticDetails: string;
  typedSearchAttributes: SearchAttributePair[];
}

/** The metadata of a goal that starts now (status running, its first iteration). */
export function goalStartMetadata(goal: GoalDefinition): GoalStartMetadata {
  return {
    // The Web UI renders both as Markdown, where `$…$` is math: dollars are escaped.
    staticSummary: clipBytes(escapeUiMarkdown(goal.objective.replace(/\s+/g, ' ')), STATIC_SUMMARY_MAX_BYTES),
    staticDetails: escapeUiMarkdown(
      `**Workspace:** \`${goal.workspace}\`\n\n**Model:** \`${goal.model}\`\n\n**Objective:**\n\n${goal.objective}`,
    ),
    typedSearchAttributes: [
      { key: GoalStatusKey, value: 'running' },
      { key: GoalSessionKey, value: goal.sessionId },
      { key: GoalModelKey, value: clipHead(goal.model, MODEL_ATTRIBUTE_MAX_CHARS) },
      { key: GoalIterationKey, value: START_ITERATION },
    ],
  };
}
