/**
 * How a goal's tool processes are contained (config `sandbox.*`, flags `--sandbox` and `--network`).
 * Pure data: the sandbox itself is built by activities/sandbox.
 */

/** The sandbox policies. `off` runs tools unsandboxed and must be asked for by name. */
export const SANDBOX_MODES = ['workspace-write', 'read-only', 'off'] as const;

/** A sandbox policy. */
export type SandboxMode = (typeof SANDBOX_MODES)[number];

/** When the model may ask to run one command outside the sandbox. */
export const APPROVAL_POLICIES = ['never', 'on-request'] as const;

/** An approval policy: `never` denies every escalation at once; `on-request` waits for a human. */
export type ApprovalPolicy = (typeof APPROVAL_POLICIES)[number];

/** Sandbox settings of a goal. */
export interface SandboxSettings {
  mode: SandboxMode;
  /** Whether tool processes may use the network (off by default). */
  network: boolean;
  /** Extra writable directories (absolute paths) besides the workspace. */
  writableRoots: string[];
  /** Extra environment variable names passed to tool processes; secret-looking names never pass. */
  env: string[];
  /** Escalations out of the sandbox: denied at once, or waiting for `goalrun approve`/`deny`. */
  approval: ApprovalPolicy;
  /** An escalation nobody answers within this many minutes is denied. */
  approvalTimeoutMinutes: number;
  /** Memory, process count and CPU time of each tool call; absent (goals started before 0.2.0): the defaults. */
  limits?: ResourceLimits;
}

/** What one tool call (and everything it starts) may use (config `sandbox.memory_mb` and the others). */
export interface ResourceLimits {
  /** Memory in MiB: the call's cgroup memory.max, or each process's data size (RLIMIT_DATA). */
  memoryMb: number;
  /** Processes and threads at once: the call's cgroup pids.max, or RLIMIT_NPROC (not for root). */
  maxProcesses: number;
  /** CPU seconds of each process (RLIMIT_CPU). */
  cpuSeconds: number;
}

/** Defaults that fit a test suite (a big build, a parallel test run) and stop a leak or a fork bomb. */
export const DEFAULT_RESOURCE_LIMITS: ResourceLimits = {
  memoryMb: 4096,
  maxProcesses: 1024,
  cpuSeconds: 600,
};

/** Minutes an escalation waits for a human before it is denied. */
export const DEFAULT_APPROVAL_TIMEOUT_MINUTES = 30;

/** The default sandbox: workspace writable, root read-only, no network, escalations denied. */
export const DEFAULT_SANDBOX: SandboxSettings = {
  mode: 'workspace-write',
  network: false,
  writableRoots: [],
  env: [],
  approval: 'never',
  approvalTimeoutMinutes: DEFAULT_APPROVAL_TIMEOUT_MINUTES,
};
