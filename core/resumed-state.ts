/**
 * The control state a resumed execution starts from (`goalrun resume`): the saved state of the
 * execution that stopped, running again under this execution's number, with none of the stopped
 * execution's work in flight (a pause, a pending approval, a running tool, running jobs) carried over.
 */
import type { GoalLimits, GoalState } from './goal';

/** What a resume sets besides the saved state. */
export interface ResumeSettings {
  /** This execution's number: one more than any execution the store has seen. */
  execution: number;
  /** Limits that replace the saved ones (e.g. a higher --max-iterations). */
  limitsOverride?: Partial<GoalLimits>;
  /** The queue of the foreground process that resumes the goal, or undefined when none hosts it. */
  hostQueue?: string;
  /** `resume --trust-project`: this execution trusts the project's hooks and servers as they are now. */
  trustProject?: boolean;
}

/** The state of a resumed execution, from the saved one. */
export function resumedState(saved: GoalState, settings: ResumeSettings): GoalState {
  return {
    ...saved,
    goal: {
      ...saved.goal,
      limits: { ...saved.goal.limits, ...settings.limitsOverride },
      // The process that resumes it hosts it now (or nobody does): never the one that ran it before.
      hostQueue: settings.hostQueue,
      ...(settings.trustProject
        ? {
            extensions: {
              ...saved.goal.extensions,
              trustProject: true,
              // Its gathering pins the files afresh; later ones keep that pin.
              trustedExecution: settings.execution,
            },
          }
        : {}),
    },
    executions: settings.execution,
    status: 'running',
    reason: null,
    paused: false,
    approval: null,
    runningTool: null,
    // Jobs died with the execution that ran them.
    jobs: saved.jobs.map((job) => (job.status === 'running' ? { ...job, status: 'lost' as const } : job)),
  };
}
