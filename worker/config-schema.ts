/**
 * The config file's zod schema: the full verdict and the error messages for `$GOALRUN_HOME/config.json`.
 * zod is required when the schema is first asked for, which is only when the hand-checked fast path
 * (config-fast-path.ts) cannot accept a config by itself: loading zod costs the light commands a
 * twentieth of a second (issue 10).
 */
import path from 'node:path';
import type * as Zod from 'zod';
import { hooksSchema, mcpServersSchema } from '../activities/extensions/config-schemas';
import { parseRetentionDuration } from '../core/retention';
import { APPROVAL_POLICIES, SANDBOX_MODES } from '../core/sandbox-settings';
import { isTemporalHttpAddress } from './config-fast-path';

function buildConfigSchema(z: typeof Zod) {
  const positiveInt = z.number().int().positive();

  /** The `sandbox` section of the config (issue 8): how tool processes are contained. */
  const sandboxSchema = z
    .object({
      mode: z.enum(SANDBOX_MODES).optional(),
      network: z.boolean().optional(),
      writable_roots: z
        .array(z.string().refine((dir) => path.isAbsolute(dir), 'must be an absolute path'))
        .optional(),
      env: z.array(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be a variable name')).optional(),
      approval: z.enum(APPROVAL_POLICIES).optional(),
      approval_timeout_minutes: positiveInt.optional(),
      /** Resource limits of each tool call (see docs/sandbox.md). */
      memory_mb: positiveInt.optional(),
      max_processes: positiveInt.optional(),
      cpu_seconds: positiveInt.optional(),
    })
    .strict();

  /** The config file's schema. Unknown keys are errors, so a typo never silently does nothing. */
  return z
    .object({
      model: z.string().min(1).optional(),
      base_url: z.string().url().optional(),
      max_iterations: positiveInt.optional(),
      max_steps: positiveInt.optional(),
      max_minutes: positiveInt.optional(),
      no_progress_limit: positiveInt.optional(),
      /** Money cap of each goal in US dollars (issue 18), as `--max-cost-usd`. */
      max_cost_usd: z.number().positive().finite().optional(),
      /** Token cap of each goal, as `--max-tokens`. */
      max_tokens: positiveInt.optional(),
      /** The runaway breaker (issue 18): pauses a goal that spins; 0 turns a count rule off. */
      breaker: z
        .object({
          repeat_limit: z.number().int().nonnegative().optional(),
          wait_limit: z.number().int().nonnegative().optional(),
          idle_turns: z.number().int().nonnegative().optional(),
          max_usd_per_minute: z.number().positive().finite().optional(),
          max_tokens_per_minute: positiveInt.optional(),
          window_seconds: positiveInt.optional(),
        })
        .strict()
        .optional(),
      /** How long a goal at its cap waits for a raise before it ends as budget_reached. */
      budget_wait_minutes: positiveInt.optional(),
      /** A provider quota that comes back later than this many minutes ends the goal as blocked. */
      quota_wait_minutes: positiveInt.optional(),
      temporal_address: z.string().min(1).optional(),
      /** Temporal's HTTP API, `host:port` or an http(s) URL: the read-only commands use it instead of gRPC. */
      temporal_http_address: z
        .string()
        .refine(isTemporalHttpAddress, 'must be host:port or an http(s) URL')
        .optional(),
      temporal_namespace: z.string().min(1).optional(),
      task_queue: z.string().min(1).optional(),
      database_url: z.string().min(1).optional(),
      auto_compact_enabled: z.boolean().optional(),
      auto_compact_threshold_pct: z.number().min(1).max(100).optional(),
      auto_compact_target_pct: z.number().min(1).max(100).optional(),
      auto_compact_max_failures: positiveInt.optional(),
      context_window: positiveInt.optional(),
      summarizer_model: z.string().min(1).optional(),
      backup_model: z.string().min(1).optional(),
      /** Where the backup model's requests go; the goal's base URL when the backup is of the same provider. */
      backup_base_url: z.string().url().optional(),
      /** Retryable provider failures in a row that move a goal to its backup model. */
      failover_after_failures: positiveInt.optional(),
      /** A provider outage this many minutes long moves a goal to its backup model. */
      failover_after_minutes: positiveInt.optional(),
      /** How long a goal stays on its backup before a step probes the primary again, in seconds. */
      failover_cooldown_s: positiveInt.optional(),
      provider_unreachable_minutes: positiveInt.optional(),
      /** A model stream silent this many seconds (no byte, not even a ping) is retried as stalled. */
      stream_idle_timeout_s: positiveInt.optional(),
      /** A running goal without a finished step this many minutes shows `stalled` in status and list. */
      stalled_after_minutes: positiveInt.optional(),
      sandbox: sandboxSchema.optional(),
      /** The tools queue of a tool host (see `goalrun worker --role tools`) that new goals send their tools to. */
      tools_queue: z.string().min(1).optional(),
      /** A file of payload encryption keys (docs/security.md); GOALRUN_PAYLOAD_KEYS wins over it. */
      payload_keys_file: z
        .string()
        .refine((file) => path.isAbsolute(file), 'must be an absolute path')
        .optional(),
      /** MCP servers, in the `mcpServers` format of Claude Code and Cursor, plus a per-server `approval`. */
      mcp_servers: mcpServersSchema(z, true).optional(),
      /** Hooks: pre_tool, post_tool, stop, notify. */
      hooks: hooksSchema(z).optional(),
      /** Use a workspace's own `.mcp.json` and `.goalrun/hooks.json` (as `--trust-project`). */
      trust_project: z.boolean().optional(),
      /** The old name of trust_project. */
      trust_project_mcp: z.boolean().optional(),
      /** The variable that holds an openai-compatible endpoint's key (as `--api-key-env`). */
      api_key_env: z
        .string()
        .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be a variable name')
        .optional(),
      /** The cap on project instructions (AGENTS.md), all files together, in KiB. */
      instructions_max_kib: positiveInt.optional(),
      /** A file larger than this (MiB) is left out of the per-step workspace snapshots. */
      snapshot_max_file_mib: positiveInt.optional(),
      /** A goal's snapshots stop once the objects they added pass this (MiB). */
      snapshot_max_total_mib: positiveInt.optional(),
      /** Where a goal that needs someone, or ended, is told (docs/configuration.md#notifications). */
      notify: z.array(notifyTargetSchema(z)).optional(),
      /** Every goal in a git worktree of its own, as `--worktree`. */
      worktree: z.boolean().optional(),
      /** Checks a goal's finish must pass (as `--verify`, repeatable there): shell commands, exit 0 passes. */
      verify: z.array(z.string().trim().min(1, 'must be a command')).optional(),
      /** Criteria only a person can judge (as `--sign-off`): the goal waits in awaiting_user for approve or deny. */
      sign_off: z.array(z.string().trim().min(1, 'must be a criterion')).optional(),
      /** Failed finishes (a check did not pass) before the goal ends blocked. */
      verify_max_failures: positiveInt.optional(),
      /** Seconds one check may run before it is killed and counts as failed. */
      verify_timeout_s: positiveInt.optional(),
      /** A daily clean (a Temporal Schedule a worker creates, see docs/configuration.md): as `clean --all --yes`. */
      retention: z
        .object({
          older_than: z
            .string()
            .refine(
              (text) => parseRetentionDuration(text) !== null,
              'must be a duration like 30d, 12h, 90m or 2w',
            )
            .optional(),
          keep: z.number().int().nonnegative().optional(),
        })
        .strict()
        .optional(),
    })
    .strict();
}

type ConfigSchema = ReturnType<typeof buildConfigSchema>;
let schema: ConfigSchema | undefined;

/** The config file's schema (built, and zod loaded, on first use). */
export function configSchema(): ConfigSchema {
  schema ??= buildConfigSchema(require('zod') as typeof Zod);
  return schema;
}

/** One entry of `notify`: a webhook, an ntfy topic or the desktop. */
function notifyTargetSchema(z: typeof Zod) {
  const httpUrl = z.string().refine((value) => /^https?:\/\/[^\s]+$/.test(value), 'must be an http(s) URL');
  const pageUrl = httpUrl.optional();
  return z.discriminatedUnion('type', [
    z.strictObject({
      type: z.literal('webhook'),
      url: httpUrl,
      /** Signs each body: header X-Goalrun-Signature: sha256=HMAC(secret, body). */
      secret: z.string().min(1).optional(),
      format: z.enum(['json', 'slack']).optional(),
      page_url: pageUrl,
    }),
    z.strictObject({
      type: z.literal('ntfy'),
      url: httpUrl,
      token: z.string().min(1).optional(),
      page_url: pageUrl,
    }),
    z.strictObject({ type: z.literal('desktop'), page_url: pageUrl }),
  ]);
}

/** A valid config file. */
export type GoalrunConfig = Zod.infer<ConfigSchema>;
