/** The options shared by `run`, `start` and `demo`: parsed, validated, turned into a goal. */
import fs from 'node:fs';
import path from 'node:path';
import { Option } from 'commander';
import { ConfigError } from '../core/errors';
import type { GoalLimits } from '../core/goal';
import {
  DEFAULT_MAX_ITERATIONS,
  DEFAULT_MAX_MINUTES,
  DEFAULT_MAX_STEPS,
  DEFAULT_MODEL,
} from '../core/limits';
import {
  APPROVAL_POLICIES,
  DEFAULT_RESOURCE_LIMITS,
  DEFAULT_SANDBOX,
  SANDBOX_MODES,
  type SandboxSettings,
} from '../core/sandbox-settings';
import type { Settings } from '../worker/settings';

/** Raw goal options as commander hands them over. */
export interface GoalOptions {
  workspace?: string;
  model?: string;
  baseUrl?: string;
  maxIterations?: string;
  maxSteps?: string;
  maxMinutes?: string;
  maxCostUsd?: string;
  maxTokens?: string;
  contextWindow?: string;
  /** The backup model (issue 27 §3), as config backup_model. */
  backupModel?: string;
  streamIdleTimeout?: string;
  sandbox?: string;
  network?: boolean;
  approval?: string;
  toolsQueue?: string;
  mcpConfig?: string;
  trustProject?: boolean;
  /** The old name of --trust-project. */
  trustProjectMcp?: boolean;
  apiKeyEnv?: string;
  worker?: boolean;
  json?: boolean;
  appendSystemPrompt?: string;
  allowedTools?: string;
  disallowedTools?: string;
  outputLastMessage?: string;
  outputSchema?: string;
  /** `--worktree`: run the goal in a git worktree of its own (cli/goal-worktree.ts). */
  worktree?: boolean;
  /** `--image`, once per file. */
  image?: string[];
  includePartialMessages?: boolean;
  /** `--verify CMD`, repeatable: checks a finish complete must pass. */
  verify?: string[];
  /** `--sign-off CRITERION`, repeatable: what only a person can judge. */
  signOff?: string[];
}

/** The commander collector of a repeated `--image`. */
function collectImage(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

/** The headless options of `run` and `start` (as `claude -p` and `codex exec` have them). */
export function headlessOptionList(): Option[] {
  return [
    new Option('--append-system-prompt <text>', 'text added at the end of the system prompt'),
    new Option(
      '--allowed-tools <rules>',
      'only these tool calls run: tool names or patterns over the main argument, e.g. "bash(git *),file-read"; Claude Code\'s names work too ("Write,Read,Bash(git:*)")',
    ),
    new Option(
      '--output-schema <file>',
      "a JSON Schema file: the goal's final result (finish's `result`) must match it; status --json shows it as result",
    ),
    new Option(
      '--verify <command>',
      'a check the goal must pass before it is completed (repeatable), e.g. --verify "npm test": run in the sandbox when the model says it is done; exit 0 passes, anything else (a timeout too) sends the model back to work, and after 3 failed finishes (config verify_max_failures) the goal ends blocked. Adds to config verify and the project\'s .goalrun/config.json verify',
    ).argParser((value: string, previous: string[] | undefined) => [...(previous ?? []), value]),
    new Option(
      '--sign-off <criterion>',
      'a criterion only a person can judge (repeatable), e.g. --sign-off "the page looks right": when the model says it is done and the checks pass, the goal waits in awaiting_user with the evidence; goalrun approve completes it, goalrun deny --reason sends it back to work. Adds to config sign_off',
    ).argParser((value: string, previous: string[] | undefined) => [...(previous ?? []), value]),
    new Option(
      '--disallowed-tools <rules>',
      'these tool calls never run (same form as --allowed-tools; wins over it); the model is told',
    ),
    new Option(
      '--image <file>',
      'attach an image (PNG, JPEG, GIF or WebP, at most 5 MiB) to the first message; repeat for more. The model\'s card must list "image" in "input"',
    ).argParser(collectImage),
  ];
}

/** The help of --mcp-config. */
const MCP_CONFIG_HELP = [
  'MCP servers for the goal, in the Claude Code / Cursor format',
  '{"mcpServers": {"NAME": {"command","args","env"} | {"type":"http","url","headers"}}};',
  'e.g. --mcp-config ~/.cursor/mcp.json. stdio servers run in the sandbox;',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: the help names the ${VAR} syntax of MCP config files
  '${VAR} in env, args, url and headers comes from the tool host (see docs/extending.md)',
].join(' ');

/** The commander options for a goal, in one place so `run`, `start` and `resume` agree. */
export function goalOptionList(): Option[] {
  return [
    new Option('-w, --workspace <dir>', 'directory the agent works in (default: the current directory)'),
    new Option(
      '-m, --model <spec>',
      `model: openai:<m>, anthropic:<m>, ollama:<m>, openai-compatible:<m>, scripted:<file> (default: ${DEFAULT_MODEL}, or GOALRUN_MODEL / config model)`,
    ),
    new Option('--base-url <url>', 'base URL of an OpenAI-compatible endpoint (or OPENAI_BASE_URL)'),
    new Option(
      '--api-key-env <name>',
      'the variable holding the key of an openai-compatible endpoint, read by the worker (default: OPENAI_COMPATIBLE_API_KEY; config api_key_env). OPENAI_API_KEY goes to api.openai.com only',
    ),
    new Option('--context-window <tokens>', "the model's context window, overriding its model card"),
    new Option(
      '--backup-model <spec>',
      'the model the next steps fail over to after 3 overloaded or failing answers in a row (5xx, 529, unreachable; never 400/401/403) or a long outage; the primary is tried again after a cooldown (config backup_model, failover_*)',
    ),
    new Option(
      '--stream-idle-timeout <seconds>',
      'retry a model call whose stream sends nothing for this long (default: 120, config stream_idle_timeout_s)',
    ),
    new Option(
      '--sandbox <mode>',
      'how tool processes are contained: workspace-write (default: the workspace is writable, the rest read-only, no network), read-only, or off (no sandbox at all)',
    ).choices([...SANDBOX_MODES]),
    new Option('--network', 'let tool processes use the network (off by default; config sandbox.network)'),
    new Option(
      '--approval <policy>',
      'never (default): a command asking to leave the sandbox is refused; on-request: the goal waits for goalrun approve/deny',
    ).choices([...APPROVAL_POLICIES]),
    new Option(
      '--tools-queue <name>',
      'run the tools on this tool host (`goalrun worker --role tools` prints its queue); default: the workers of this store',
    ),
    new Option('--mcp-config <file>', MCP_CONFIG_HELP),
    ...trustOptionList(),
    ...limitOptionList(),
  ];
}

/** `--trust-project` and its old name, for `run`, `start`, `resume` and `doctor`. */
export function trustOptionList(): Option[] {
  return [
    new Option(
      '--trust-project',
      "use the workspace's own .goalrun/hooks.json and .mcp.json, as they are now: the goal keeps them as trusted even if the model changes them (off by default: a cloned repository must not start processes; config trust_project). They never widen the sandbox",
    ),
    new Option('--trust-project-mcp', 'the old name of --trust-project').hideHelp(),
  ];
}

/** Whether the options (or the config) trust the project's hooks and MCP servers. */
export function trustsProject(
  options: Pick<GoalOptions, 'trustProject' | 'trustProjectMcp'>,
  settings: Settings,
): boolean {
  return (
    options.trustProject ??
    options.trustProjectMcp ??
    settings.config.trust_project ??
    settings.config.trust_project_mcp ??
    false
  );
}

/**
 * Where the tool host finds the goal's MCP servers and hooks besides its own config: the
 * `--mcp-config` file (validated here, so a broken file stops `run` at once) and the trust flag.
 * Undefined when the goal names neither.
 */
export function extensionSourcesFromOptions(
  options: GoalOptions,
  settings: Settings,
  onToolHost: boolean,
  readMcpConfigFile: (file: string) => unknown,
): { mcpConfigFile?: string; trustProject?: boolean } | undefined {
  const trustProject = trustsProject(options, settings);
  let mcpConfigFile: string | undefined;
  if (options.mcpConfig !== undefined) {
    mcpConfigFile = path.resolve(options.mcpConfig);
    // A file only the tool host has (--tools-queue) is checked there; here it must be given absolute.
    if (fs.existsSync(mcpConfigFile) || !(onToolHost && path.isAbsolute(options.mcpConfig))) {
      readMcpConfigFile(mcpConfigFile);
    }
  }
  if (!mcpConfigFile && !trustProject) return undefined;
  return { ...(mcpConfigFile ? { mcpConfigFile } : {}), ...(trustProject ? { trustProject } : {}) };
}

/** The goal's sandbox: flags over the config's sandbox section over the defaults. */
export function sandboxFromOptions(options: GoalOptions, settings: Settings): SandboxSettings {
  const config = settings.config.sandbox ?? {};
  for (const root of config.writable_roots ?? []) {
    if (!fs.existsSync(root) || !fs.statSync(root).isDirectory()) {
      throw new ConfigError(`config sandbox.writable_roots: ${root} is not a directory`);
    }
  }
  return {
    mode: (options.sandbox as SandboxSettings['mode'] | undefined) ?? config.mode ?? DEFAULT_SANDBOX.mode,
    network: options.network ?? config.network ?? DEFAULT_SANDBOX.network,
    writableRoots: (config.writable_roots ?? []).map((root) => path.resolve(root)),
    env: config.env ?? [],
    approval:
      (options.approval as SandboxSettings['approval'] | undefined) ??
      config.approval ??
      DEFAULT_SANDBOX.approval,
    approvalTimeoutMinutes: config.approval_timeout_minutes ?? DEFAULT_SANDBOX.approvalTimeoutMinutes,
    limits: {
      memoryMb: config.memory_mb ?? DEFAULT_RESOURCE_LIMITS.memoryMb,
      maxProcesses: config.max_processes ?? DEFAULT_RESOURCE_LIMITS.maxProcesses,
      cpuSeconds: config.cpu_seconds ?? DEFAULT_RESOURCE_LIMITS.cpuSeconds,
    },
  };
}

/** Refuses a base URL that carries credentials: it would end up in workflow payloads and logs. */
export function checkBaseUrl(baseUrl: string | undefined, where: string): void {
  if (!baseUrl) return;
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new ConfigError(`${where} is not a URL: "${baseUrl}"`);
  }
  if (url.username || url.password) {
    throw new ConfigError(
      `${where} carries credentials (user:password@); put the key in OPENAI_API_KEY instead: the base URL is stored with the goal and shown in logs`,
    );
  }
}

/** The limit options (also accepted by `resume`). */
export function limitOptionList(): Option[] {
  return [
    // Defaults in the text only: a commander default would look like a flag and override the config.
    new Option(
      '--max-iterations <n>',
      `stop after this many agent turns (limit_reached; default: ${DEFAULT_MAX_ITERATIONS}, or config max_iterations)`,
    ),
    new Option(
      '--max-steps <n>',
      `stop after this many model calls (limit_reached; default: ${DEFAULT_MAX_STEPS}, or config max_steps)`,
    ),
    new Option(
      '--max-minutes <n>',
      `stop after this much wall-clock time (limit_reached; default: ${DEFAULT_MAX_MINUTES}, or config max_minutes)`,
    ),
    new Option(
      '--max-cost-usd <usd>',
      'spend at most this many US dollars on model calls, summarizer included; at the cap the goal waits in budget_reached until goalrun limits raises it (default: none, or config max_cost_usd)',
    ),
    new Option(
      '--max-tokens <n>',
      'use at most this many tokens (input plus output of every model call); like --max-cost-usd (default: none, or config max_tokens)',
    ),
  ];
}

/** A positive integer from a flag, or a ConfigError naming the flag. */
export function positiveIntFlag(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value.trim()) || Number(value) <= 0) {
    throw new ConfigError(`${flag} must be a positive whole number, got "${value}"`);
  }
  return Number(value);
}

/** A positive amount of US dollars from a flag (`0.50`), or a ConfigError naming the flag. */
export function dollarsFlag(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  const amount = Number(value.trim());
  if (!/^\d+(\.\d+)?$/.test(value.trim()) || !Number.isFinite(amount) || amount <= 0) {
    throw new ConfigError(`${flag} must be a positive amount of US dollars such as 0.50, got "${value}"`);
  }
  return amount;
}

/** Limit overrides given on the command line. */
export function limitsFromFlags(options: GoalOptions): Partial<GoalLimits> {
  const limits: Partial<GoalLimits> = {};
  const iterations = positiveIntFlag(options.maxIterations, '--max-iterations');
  const steps = positiveIntFlag(options.maxSteps, '--max-steps');
  const minutes = positiveIntFlag(options.maxMinutes, '--max-minutes');
  if (iterations !== undefined) limits.maxIterations = iterations;
  if (steps !== undefined) limits.maxSteps = steps;
  if (minutes !== undefined) limits.maxMinutes = minutes;
  const costUsd = dollarsFlag(options.maxCostUsd, '--max-cost-usd');
  const tokens = positiveIntFlag(options.maxTokens, '--max-tokens');
  if (costUsd !== undefined) limits.maxCostUsd = costUsd;
  if (tokens !== undefined) limits.maxTokens = tokens;
  return limits;
}

/**
 * Resolves and checks the workspace directory. With `onToolHost` (a goal whose tools run on a tool
 * host, --tools-queue) the workspace may live only on that host: an absolute path that does not
 * exist here is accepted, and the tool host reports it if it is missing there too.
 */
export function resolveWorkspace(dir: string | undefined, onToolHost = false): string {
  const workspace = path.resolve(dir ?? process.cwd());
  let stat: fs.Stats;
  try {
    stat = fs.statSync(workspace);
  } catch {
    if (onToolHost && dir !== undefined && path.isAbsolute(dir)) return workspace;
    throw new ConfigError(
      `workspace ${workspace} does not exist${onToolHost ? ' here (a workspace that exists only on the tool host must be given as an absolute path)' : ''}`,
    );
  }
  if (!stat.isDirectory()) throw new ConfigError(`workspace ${workspace} is not a directory`);
  return workspace;
}
