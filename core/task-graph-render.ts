/**
 * Text forms of the task list: a compact one-line-per-task form for the model and the CLI, and
 * Markdown for the Temporal Web UI.
 */
import { TASK_STATUSES, type TaskStatus, type TaskView } from './task-graph-types';

/** The checkbox each status is drawn with in the compact form. */
export const TASK_STATUS_MARKS: Record<TaskStatus, string> = {
  pending: '[ ]',
  in_progress: '[>]',
  completed: '[x]',
  blocked: '[!]',
  cancelled: '[-]',
};

/** What the compact form says when the list is empty. */
export const EMPTY_TASK_LIST_TEXT = 'No tasks.';

/** What the Markdown form says when the list is empty. */
export const EMPTY_TASK_LIST_MARKDOWN = '_No tasks._';

const STATUS_WORDS: Record<TaskStatus, string> = {
  pending: 'pending',
  in_progress: 'in progress',
  completed: 'completed',
  blocked: 'blocked',
  cancelled: 'cancelled',
};

/** Content is free text from the model; one task must stay one line. */
function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/** The parenthesised tail of a compact line: dependencies, what still blocks it, readiness. */
function annotations(task: TaskView): string {
  const parts: string[] = [];
  if (task.dependencies.length > 0) parts.push(`depends on ${task.dependencies.join(', ')}`);
  if (task.blocked_by.length > 0) parts.push(`blocked by ${task.blocked_by.join(', ')}`);
  if (task.ready) parts.push('ready');
  return parts.length > 0 ? ` (${parts.join('; ')})` : '';
}

/**
 * One line per task in the given (dependency) order, e.g. `[x] task-1 Write the parser` or
 * `[ ] task-2 Add tests (depends on task-1; blocked by task-1)`.
 */
export function renderTaskList(view: TaskView[]): string {
  if (view.length === 0) return EMPTY_TASK_LIST_TEXT;
  return view
    .map(
      (task) => `${TASK_STATUS_MARKS[task.status]} ${task.id} ${oneLine(task.content)}${annotations(task)}`,
    )
    .join('\n');
}

/** A one-line count of the list, e.g. `4 tasks: 1 completed, 1 in progress, 2 pending. Ready: task-4.` */
export function summarizeTaskList(view: TaskView[]): string {
  if (view.length === 0) return EMPTY_TASK_LIST_TEXT;
  const counts = TASK_STATUSES.map((status) => ({
    status,
    count: view.filter((task) => task.status === status).length,
  }))
    .filter((entry) => entry.count > 0)
    .map((entry) => `${entry.count} ${STATUS_WORDS[entry.status]}`);
  const ready = view.filter((task) => task.ready).map((task) => task.id);
  const noun = view.length === 1 ? 'task' : 'tasks';
  const readyText = ready.length > 0 ? ` Ready: ${ready.join(', ')}.` : '';
  return `${view.length} ${noun}: ${counts.join(', ')}.${readyText}`;
}

/** Characters that would otherwise turn model-written content into Markdown structure. */
const MARKDOWN_SPECIAL = /[\\`*_[\]<>#|~]/g;

function escapeMarkdown(text: string): string {
  return oneLine(text).replace(MARKDOWN_SPECIAL, (char) => `\\${char}`);
}

/** Ids are validated to hold no backtick, but a stored graph may predate that rule. */
function codeSpan(id: string): string {
  return id.includes('`') ? escapeMarkdown(id) : `\`${id}\``;
}

function markdownLine(task: TaskView): string {
  const box = task.status === 'completed' ? '[x]' : '[ ]';
  const label = `${codeSpan(task.id)} ${escapeMarkdown(task.content)}`;
  const body = task.status === 'cancelled' ? `~~${label}~~` : label;
  const tags: string[] = [];
  if (task.status !== 'pending' && task.status !== 'completed') tags.push(`_${STATUS_WORDS[task.status]}_`);
  if (task.blocked_by.length > 0) {
    tags.push(`blocked by ${task.blocked_by.map(codeSpan).join(', ')}`);
  }
  if (task.ready) tags.push('_ready_');
  return `- ${box} ${body}${tags.length > 0 ? ` — ${tags.join(', ')}` : ''}`;
}

/** The list as a GitHub-style Markdown task list with a progress line, for the Temporal Web UI. */
export function renderTasksMarkdown(view: TaskView[]): string {
  if (view.length === 0) return EMPTY_TASK_LIST_MARKDOWN;
  const completed = view.filter((task) => task.status === 'completed').length;
  // "1 of 6", not "1/6": the Web UI's Markdown turns small fractions into glyphs (½).
  const header = `**Tasks** — ${completed} of ${view.length} completed`;
  return [header, '', ...view.map(markdownLine)].join('\n');
}
