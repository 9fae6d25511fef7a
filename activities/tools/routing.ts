/**
 * What the workflow must know about a tool call before it runs it: whether it starts a background
 * job, which job it reads or kills (jobs live on one tool host), and whether it asks to leave the
 * sandbox. The model step calls this on the parsed arguments and puts the answer on ToolCallRef.
 */

import { clip } from '../../core/text';
import { LEGACY_TOOL, TOOL } from '../../core/tool-names';

/** Routing facts of one tool call (ToolCallRef.routing). */
export interface ToolCallRouting {
  /** bash with run_in_background: the workflow assigns a job id and records the job. */
  background?: boolean;
  /** The job this call reads or kills (bash job_id, job-output, job-kill; `all` for every job). */
  jobId?: string;
  /** bash with sandbox_permissions require_escalated: a human must approve running it unsandboxed. */
  escalation?: {
    command: string;
    justification: string;
    /** An MCP call its server's approval policy holds for a human (waits even with sandbox.approval "never"). */
    mcpServer?: string;
  };
}

/** Tools that act on one job (bash-output is job-output's retired name). */
const JOB_TOOL_NAMES: ReadonlySet<string> = new Set([TOOL.jobOutput, TOOL.jobKill, LEGACY_TOOL.bashOutput]);

/** Longest justification carried in workflow state; the rest stays in the stored arguments. */
const MAX_JUSTIFICATION_CHARS = 2_000;
/** Longest command carried in workflow state for an approval prompt. */
const MAX_COMMAND_CHARS = 4_000;

/** The arguments as an object: parsed JSON for a string, undefined when they are neither. */
function argsObject(rawArgs: unknown): Record<string, unknown> | undefined {
  let value = rawArgs;
  if (typeof value === 'string') {
    try {
      value = JSON.parse(value);
    } catch {
      return undefined;
    }
  }
  return value !== null && typeof value === 'object' && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

/**
 * The routing facts of a call, or undefined when it needs no routing. Lenient: arguments that
 * will fail validation route nowhere special, and the tool then reports the problem.
 */
export function routingOf(toolName: string, rawArgs: unknown): ToolCallRouting | undefined {
  const args = argsObject(rawArgs);
  if (!args) return undefined;
  const jobId = typeof args.job_id === 'string' && args.job_id !== '' ? args.job_id : undefined;
  if (JOB_TOOL_NAMES.has(toolName)) return jobId ? { jobId } : undefined;
  if (toolName !== TOOL.bash) return undefined;
  const command = typeof args.command === 'string' ? args.command : undefined;
  const routing: ToolCallRouting = {};
  if (command === undefined) {
    if (jobId) routing.jobId = jobId;
  } else {
    if (args.run_in_background === true) routing.background = true;
    if (args.sandbox_permissions === 'require_escalated') {
      const justification = typeof args.justification === 'string' ? args.justification : '';
      routing.escalation = {
        command: clip(command, MAX_COMMAND_CHARS),
        justification: clip(justification, MAX_JUSTIFICATION_CHARS),
      };
    }
  }
  return Object.keys(routing).length > 0 ? routing : undefined;
}
