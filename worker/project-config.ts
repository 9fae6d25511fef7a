/**
 * The project-local config (issue 17, issue 24 §3): `.goalrun/config.json` in the workspace, else in
 * its git root. The workspace is the model's, so the file is the model's too: it is read by the
 * workspace reader (no link followed, size capped), and it may only make goals stricter. It may lower
 * a limit and tighten the breaker, choose the models and the compaction settings, add checks a finish
 * must pass (never remove the user's); it never raises a
 * limit, never sets what routes credentials, goals or processes (keys, URLs, queues, sandbox,
 * network, hooks, servers, trust), and never sets prices (cards are not read from a workspace). What
 * it asked for and did not get is said, not an error: a planted file must not stop the user's `run`.
 */
import fs from 'node:fs';
import path from 'node:path';
import { readWorkspaceFileSync } from '../activities/workspace-files/read-workspace-file';
import { DEFAULT_LIMITS } from '../core/goal';
import { DEFAULT_PROVIDER_UNREACHABLE_MINUTES, DEFAULT_STALLED_AFTER_MINUTES } from '../core/limits';
import { DEFAULT_IDLE_TURNS, DEFAULT_REPEAT_LIMIT, DEFAULT_WAIT_LIMIT } from '../core/runaway-breaker';
import { DEFAULT_VERIFY_MAX_FAILURES, DEFAULT_VERIFY_TIMEOUT_S, mergeChecks } from '../core/verify';
import { DEFAULT_QUOTA_WAIT_MINUTES } from '../core/waits';
import {
  DEFAULT_SNAPSHOT_MAX_FILE_BYTES,
  DEFAULT_SNAPSHOT_MAX_TOTAL_BYTES,
} from '../core/workspace-snapshot-state';
import type { GoalrunConfig } from './config-schema';

/** Where a project's config lives, relative to the workspace or its git root. */
export const PROJECT_CONFIG_PATH = path.join('.goalrun', 'config.json');

/** Keys a project's config may not set: they route secrets, goals or processes, or trust (set them in the global file). */
export const PROJECT_CONFIG_REFUSED_KEYS = [
  'base_url',
  'api_key_env',
  'database_url',
  'temporal_address',
  'temporal_http_address',
  'temporal_namespace',
  'task_queue',
  'tools_queue',
  'payload_keys_file',
  'sandbox',
  'mcp_servers',
  'hooks',
  'trust_project',
  'trust_project_mcp',
  'instructions_max_kib',
  // A daily clean of every project of the store: a repository's file may not ask for deletions.
  'retention',
  // Where a goal's notifications go, with their signing secrets: a repository may not send them elsewhere.
  'notify',
] as const;

/** A goal run longer is a goal that can spend more: lower-only limits, with the value in force when the user set none. */
const LOWER_ONLY_LIMITS: Readonly<Record<string, number | undefined>> = {
  max_iterations: DEFAULT_LIMITS.maxIterations,
  max_steps: DEFAULT_LIMITS.maxSteps,
  max_minutes: DEFAULT_LIMITS.maxMinutes,
  no_progress_limit: DEFAULT_LIMITS.noProgressLimit,
  // No cap unless the user set one: any cap of the project's is a lowering.
  max_cost_usd: undefined,
  max_tokens: undefined,
  budget_wait_minutes: 24 * 60,
  quota_wait_minutes: DEFAULT_QUOTA_WAIT_MINUTES,
  provider_unreachable_minutes: DEFAULT_PROVIDER_UNREACHABLE_MINUTES,
  // A later stall notice, a bigger snapshot: limits too.
  stalled_after_minutes: DEFAULT_STALLED_AFTER_MINUTES,
  snapshot_max_file_mib: DEFAULT_SNAPSHOT_MAX_FILE_BYTES / (1024 * 1024),
  snapshot_max_total_mib: DEFAULT_SNAPSHOT_MAX_TOTAL_BYTES / (1024 * 1024),
  // Fewer failed finishes before blocked, a shorter time per check: a project may only tighten its checks.
  verify_max_failures: DEFAULT_VERIFY_MAX_FAILURES,
  verify_timeout_s: DEFAULT_VERIFY_TIMEOUT_S,
};

/**
 * Keys a project may set to any valid value: how the goal works, not what it may spend or reach.
 * Any key on no list is the user's alone, so a key added to the config later is closed to projects
 * until someone decides otherwise here.
 */
const PROJECT_FREE_KEYS: readonly string[] = [
  'model',
  'summarizer_model',
  'backup_model',
  'failover_after_failures',
  'failover_after_minutes',
  'failover_cooldown_s',
  'auto_compact_enabled',
  'auto_compact_threshold_pct',
  'auto_compact_target_pct',
  'auto_compact_max_failures',
  'context_window',
  'stream_idle_timeout_s',
];

/** Breaker counts: lower is tighter, but 0 turns the rule off. */
const BREAKER_COUNTS: Readonly<Record<string, number>> = {
  repeat_limit: DEFAULT_REPEAT_LIMIT,
  wait_limit: DEFAULT_WAIT_LIMIT,
  idle_turns: DEFAULT_IDLE_TURNS,
};
/** Breaker rates: lower is tighter; none set means the rule is off, so any rate tightens. */
const BREAKER_RATES = ['max_usd_per_minute', 'max_tokens_per_minute'] as const;

/** What the project's file did to the settings, for `start` and `run` to say. */
export interface ProjectConfigOutcome {
  file: string;
  /** `max_minutes 30`, one per key applied. */
  applied: string[];
  /** `max_cost_usd 100 (above your 0.03: …)`, one per key ignored, or the whole file and why. */
  ignored: string[];
}

/** The git root above a directory (the nearest with a .git entry), or null. */
export function gitRootOf(dir: string): string | null {
  let current = path.resolve(dir);
  for (;;) {
    if (fs.existsSync(path.join(current, '.git'))) return current;
    const parent = path.dirname(current);
    if (parent === current) return null;
    current = parent;
  }
}

/** The directory whose `.goalrun/config.json` applies to a workspace: it, else its git root; null when neither has one. */
export function findProjectConfig(workspace: string): string | null {
  const candidates = [path.resolve(workspace), gitRootOf(workspace)].filter(
    (dir): dir is string => dir !== null,
  );
  for (const dir of candidates) {
    // lstat: a link is found (and then refused by the reader), never followed.
    if (fs.lstatSync(path.join(dir, PROJECT_CONFIG_PATH), { throwIfNoEntry: false })) return dir;
  }
  return null;
}

/**
 * Reads a project's config with the workspace reader and validates it with `parse` (the global
 * file's rules). Null with a reason when it cannot be used at all.
 */
export function readProjectConfig(
  dir: string,
  parse: (file: string, text: string) => GoalrunConfig,
): { file: string; config: GoalrunConfig | null; problem?: string } {
  const file = path.join(dir, PROJECT_CONFIG_PATH);
  const read = readWorkspaceFileSync(dir, PROJECT_CONFIG_PATH, 'project-config', file);
  if (!read.ok) return { file, config: null, problem: read.missing ? 'it is gone' : read.note };
  try {
    return { file, config: parse(file, read.text) };
  } catch (err) {
    return { file, config: null, problem: (err as Error).message };
  }
}

function shown(value: unknown): string {
  return typeof value === 'object' ? JSON.stringify(value) : String(value);
}

/** The global config with what the project's may change of it changed; what was applied and ignored. */
export function mergeProjectConfig(
  global: GoalrunConfig,
  project: GoalrunConfig,
): { config: GoalrunConfig; applied: string[]; ignored: string[] } {
  const merged: Record<string, unknown> = { ...global };
  const applied: string[] = [];
  const ignored: string[] = [];
  const globals = global as Record<string, unknown>;
  for (const [key, value] of Object.entries(project as Record<string, unknown>)) {
    if ((PROJECT_CONFIG_REFUSED_KEYS as readonly string[]).includes(key)) {
      ignored.push(
        `${key} (only $GOALRUN_HOME/config.json may set it: it routes credentials, goals or processes)`,
      );
      continue;
    }
    if (key === 'verify' || key === 'sign_off') {
      // The model can write this file: it may add checks, never drop or replace the user's.
      const before = (globals[key] ?? []) as string[];
      const checks = mergeChecks(before, value as string[]);
      const added = checks.slice(mergeChecks(before).length);
      if (added.length > 0) {
        merged[key] = checks;
        applied.push(`${key} +${added.map((check) => JSON.stringify(check)).join(' +')}`);
      }
      continue;
    }
    if (key === 'breaker') {
      const breaker = mergeBreaker(
        (globals.breaker ?? {}) as Record<string, number>,
        value as Record<string, number>,
      );
      applied.push(...breaker.applied);
      ignored.push(...breaker.ignored);
      if (Object.keys(breaker.merged).length > 0) merged.breaker = breaker.merged;
      continue;
    }
    if (Object.hasOwn(LOWER_ONLY_LIMITS, key)) {
      const current = (globals[key] as number | undefined) ?? LOWER_ONLY_LIMITS[key];
      if (current !== undefined && (value as number) > current) {
        ignored.push(`${key} ${shown(value)} (above your ${current}: a project may only lower a limit)`);
        continue;
      }
    } else if (!PROJECT_FREE_KEYS.includes(key)) {
      ignored.push(`${key} (only $GOALRUN_HOME/config.json may set it)`);
      continue;
    }
    merged[key] = value;
    applied.push(`${key} ${shown(value)}`);
  }
  return { config: merged as GoalrunConfig, applied, ignored };
}

function mergeBreaker(
  global: Record<string, number>,
  project: Record<string, number>,
): { merged: Record<string, number>; applied: string[]; ignored: string[] } {
  const merged = { ...global };
  const applied: string[] = [];
  const ignored: string[] = [];
  for (const [key, value] of Object.entries(project)) {
    const name = `breaker.${key}`;
    if (Object.hasOwn(BREAKER_COUNTS, key)) {
      const current = global[key] ?? BREAKER_COUNTS[key];
      // 0 is off: a project may not turn a rule off, and may set any count where the user turned it off.
      if (value === 0 || (current !== 0 && value > current)) {
        ignored.push(
          `${name} ${value} (looser than your ${current}: a project may only tighten the breaker)`,
        );
        continue;
      }
    } else if ((BREAKER_RATES as readonly string[]).includes(key)) {
      const current = global[key];
      if (current !== undefined && value > current) {
        ignored.push(
          `${name} ${value} (looser than your ${current}: a project may only tighten the breaker)`,
        );
        continue;
      }
    } else {
      ignored.push(`${name} ${value} (only $GOALRUN_HOME/config.json may set it)`);
      continue;
    }
    merged[key] = value;
    applied.push(`${name} ${value}`);
  }
  return { merged, applied, ignored };
}

/** The lines `start`, `run` and `resume` print about a project's config (nothing when there is none). */
export function projectConfigLines(outcome: ProjectConfigOutcome | undefined): string[] {
  if (!outcome) return [];
  const lines: string[] = [];
  if (outcome.applied.length > 0)
    lines.push(`project config ${outcome.file}: applied ${outcome.applied.join(', ')}`);
  if (outcome.ignored.length > 0)
    lines.push(`project config ${outcome.file}: ignored ${outcome.ignored.join('; ')}`);
  return lines;
}
