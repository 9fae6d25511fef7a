/** Tools that run as activities on the workspace's host. */
export const WORKSPACE_TOOL_NAMES = [
  'bash',
  'file-read',
  'file-write',
  'file-edit',
  'glob',
  'grep',
  'tool-output',
];

/** Tools handled inside the workflow on its durable state. */
export const WORKFLOW_TOOL_NAMES = ['finish'];

/** Every tool a goal offers its model, in the order the model sees them. */
export const GOAL_TOOL_NAMES = [...WORKSPACE_TOOL_NAMES, ...WORKFLOW_TOOL_NAMES];
