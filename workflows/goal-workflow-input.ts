/** The input of the goal workflow: what `start`, `resume` and a continue-as-new hand to a run. */
import type { GoalDefinition, GoalLimits, GoalState } from '../core/goal';
import type { TaskGraph } from '../core/task-graph-types';

/** Input of the goal workflow. */
export interface GoalWorkflowInput {
  goal: GoalDefinition;
  /** Start from the session's saved state (a `goalrun resume` of a finished execution). */
  resume?: boolean;
  /** Limits that replace the saved ones on resume (e.g. a higher --max-iterations). */
  limitsOverride?: Partial<GoalLimits>;
  /** Control state carried over continue-as-new. */
  state?: GoalState;
  /** A user message delivered as the first message of a resumed execution (`resume --message`). */
  resumeMessage?: string;
  /** `resume --trust-project`: trust the project's hooks and MCP servers as they are now (issue 24 §3). */
  trustProject?: boolean;
  /** A sub-agent's start: its parent's task graph, which it shares (issue 27 §2). */
  tasks?: TaskGraph;
}
