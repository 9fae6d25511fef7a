/**
 * Every tool name, in one place. Code registers, offers and compares tools by these constants, so a
 * rename is one edit and a typo is a compile error rather than a tool that silently never matches.
 */

/** The tools a goal offers its model, by the name the model calls them. */
export const TOOL = {
  bash: 'bash',
  fileRead: 'file-read',
  fileWrite: 'file-write',
  fileEdit: 'file-edit',
  glob: 'glob',
  grep: 'grep',
  toolOutput: 'tool-output',
  jobOutput: 'job-output',
  jobKill: 'job-kill',
  memorySearch: 'memory-search',
  todoWrite: 'todo-write',
  finish: 'finish',
  /** Starts a sub-agent: a child goal (issue 27 §2). */
  agent: 'agent',
} as const;

/** Retired names that still work, each handled as the tool that replaced it; never offered. */
export const LEGACY_TOOL = {
  /** job-output's old name (spec S-JOBS). */
  bashOutput: 'bash-output',
  /** The old task tools, now todo-write calls (spec S-TASKS). */
  taskCreate: 'task-create',
  taskUpdate: 'task-update',
  taskGet: 'task-get',
  taskList: 'task-list',
  taskDelete: 'task-delete',
} as const;

/** Tools that run as activities on the workspace's host. */
export const WORKSPACE_TOOL_NAMES: string[] = [
  TOOL.bash,
  TOOL.fileRead,
  TOOL.fileWrite,
  TOOL.fileEdit,
  TOOL.glob,
  TOOL.grep,
  TOOL.toolOutput,
  TOOL.jobOutput,
  TOOL.jobKill,
];

/** Tools offered to the model that the workflow handles on its durable state. */
export const WORKFLOW_TOOL_NAMES: string[] = [TOOL.todoWrite, TOOL.finish];

/** Retired names of todo-write that still work (spec S-TASKS); not offered, but handled. */
export const LEGACY_TASK_TOOL_NAMES = [
  LEGACY_TOOL.taskCreate,
  LEGACY_TOOL.taskUpdate,
  LEGACY_TOOL.taskGet,
  LEGACY_TOOL.taskList,
  LEGACY_TOOL.taskDelete,
] as const;

/** Every tool name the workflow handles itself. */
export const WORKFLOW_HANDLED_TOOL_NAMES: string[] = [
  ...WORKFLOW_TOOL_NAMES,
  ...LEGACY_TASK_TOOL_NAMES,
  TOOL.agent,
];

/** Every tool a goal of release 0.1.0 offers its model (its histories record this list). */
export const GOAL_TOOL_NAMES_0_1: string[] = [...WORKSPACE_TOOL_NAMES, ...WORKFLOW_TOOL_NAMES];

/** Every tool a goal offers its model, in the order the model sees them (memory-search since 0.2.0). */
export const GOAL_TOOL_NAMES: string[] = [...WORKSPACE_TOOL_NAMES, TOOL.memorySearch, ...WORKFLOW_TOOL_NAMES];

/**
 * Every tool a goal of the sub-agents release offers its model while it may still start children
 * (patch sub-agents, depth below the limit): the agent tool comes last, so the prefix a provider
 * caches stays the one of goals without it.
 */
export const GOAL_TOOL_NAMES_WITH_AGENT: string[] = [...GOAL_TOOL_NAMES, TOOL.agent];
