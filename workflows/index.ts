/** Every workflow a goalrun worker registers. The worker bundles this file. */
export { goalWorkflow } from './goal-workflow';
export { goalNotificationWorkflow } from './notify-workflow';
export { retentionWorkflow } from './retention-workflow';
export { scheduledGoalWorkflow } from './scheduled-goal-workflow';
