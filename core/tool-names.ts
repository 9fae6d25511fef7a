/** Tools that run as activities on the workspace's host. */
export const WORKSPACE_TOOL_NAMES = [
  'bash',
  'file-read',
  'file-write',
  'file-edit',
  'glob',
  'grep',
  'tool-output',
  'job-output',
  'job-kill',
];

/** Tools offered to the model that the workflow handles on its durable state. */
export const WORKFLOW_TOOL_NAMES = ['todo-write', 'finish'];

/** Retired names of todo-write that still work (spec S-TASKS); not offered, but handled. */
export const LEGACY_TASK_TOOL_NAMES = ['task-create', 'task-update', 'task-get', 'task-list', 'task-delete'];

/** Every tool name the workflow handles itself. */
export const WORKFLOW_HANDLED_TOOL_NAMES = [...WORKFLOW_TOOL_NAMES, ...LEGACY_TASK_TOOL_NAMES];

/** Every tool a goal offers its model, in the order the model sees them. */
export const GOAL_TOOL_NAMES = [...WORKSPACE_TOOL_NAMES, ...WORKFLOW_TOOL_NAMES];
