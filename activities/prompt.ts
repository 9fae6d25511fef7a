/** The headless system prompt and the environment snapshot of a goal's first message. */
import os from 'node:os';
import { findRepository } from './git/repository-layout';
import { makeScratch, removeScratch, runGit } from './git/safe-git';

/** How much of `git status` the snapshot keeps: enough to orient, not a transcript-filler. */
const GIT_STATUS_MAX_LINES = 40;

/** The system prompt of every model step of a goal. */
export function systemPrompt(goal: {
  objective: string;
  workspace: string;
  tasks?: string | null;
  /** The project instructions in effect (AGENTS.md), capped; goals started before them have none. */
  instructions?: string | null;
  /** The goal's `--append-system-prompt` text. */
  appended?: string | null;
}): string {
  const sections = [
    'You are goalrun, an autonomous software agent working on a goal without a human watching.',
    `Your workspace is ${goal.workspace}. Tools run there; relative paths are resolved against it.`,
    `The objective:\n${goal.objective}`,
    [
      'How to work:',
      '- Work in small verified steps: inspect, change, then check the result with a tool (run the tests, read the file back).',
      '- Every answer should either call tools or, when the turn is done, briefly say what you did.',
      '- Nobody will answer questions. Decide sensibly yourself and note the decision.',
      '- Large tool outputs are truncated with a footer; read the rest with tool-output if you need it.',
      '- When the objective is fully done and verified, call `finish` with status "complete" and a summary.',
      '- If you cannot make progress without help (missing access, contradictory requirements), call `finish` with status "blocked" and say exactly what is missing.',
    ].join('\n'),
  ];
  // Before the task list: the instructions are fixed for an execution, the task list changes, and a
  // provider's prompt cache keeps the longest unchanged prefix.
  if (goal.instructions) sections.push(goal.instructions);
  // Fixed for the goal, so before the task list too.
  if (goal.appended) sections.push(goal.appended);
  if (goal.tasks) sections.push(`Your current task list (todo-write):\n${goal.tasks}`);
  return sections.join('\n\n');
}

/** The first message of a goal: the objective and a snapshot of the environment (spec: first message). */
export async function firstMessageText(
  goal: { objective: string; workspace: string },
  now: Date,
): Promise<string> {
  const git = await gitStatus(goal.workspace);
  return [
    `Objective: ${goal.objective}`,
    [
      'Environment:',
      `- working directory: ${goal.workspace}`,
      `- OS: ${os.type()} ${os.release()} (${os.platform()}/${os.arch()})`,
      `- date: ${now.toISOString()}`,
      `- git: ${git}`,
    ].join('\n'),
  ].join('\n\n');
}

/**
 * The first message of a goal whose tool host took the environment snapshot (inside the sandbox,
 * where the workspace is): the model worker only writes it down.
 */
export function firstMessageWithEnvironment(goal: { objective: string }, environment: string): string {
  return [`Objective: ${goal.objective}`, environment].join('\n\n');
}

/** How long the first message's `git status` may take. */
const GIT_STATUS_TIMEOUT_MS = 5_000;

/**
 * A short `git status` of the workspace, or why there is none. Goals started before the tool host
 * took the environment snapshot come here: git runs on this host, by the safe rule (git/safe-git.ts).
 */
async function gitStatus(workspace: string): Promise<string> {
  const found = findRepository(workspace);
  if (found.kind === 'none') return 'not a git repository';
  if (found.kind === 'refused') return `unknown (git is not run on this repository: ${found.reason})`;
  const scratch = makeScratch();
  try {
    const { stdout } = await runGit(
      {
        place: { sandboxed: false },
        layout: found.layout,
        writable: [],
        scratch,
        timeoutMs: GIT_STATUS_TIMEOUT_MS,
      },
      ['--no-optional-locks', 'status', '--short', '--branch'],
    );
    const lines = stdout.trimEnd().split('\n');
    const shown = lines.slice(0, GIT_STATUS_MAX_LINES).join('\n  ');
    const more =
      lines.length > GIT_STATUS_MAX_LINES ? `\n  … ${lines.length - GIT_STATUS_MAX_LINES} more` : '';
    return `\n  ${shown}${more}`;
  } catch {
    return 'not a git repository';
  } finally {
    removeScratch(scratch);
  }
}
