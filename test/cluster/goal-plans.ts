/**
 * The 20 goals of the cluster test and the model that drives them: an OpenAI-compatible test server
 * whose answer is worked out from the request alone (no per-goal counter), so a model call retried
 * after a crash, a worker that changed, or a compaction that summarized the early steps away all get
 * the right next answer.
 *
 * Each goal's objective names its tag (`cluster goal G07`). Call k of goal G07 is tagged `G07-C<k>`;
 * its command appends `DONE:G07-C<k>` to `marks/G07-C<k>` in the workspace as its last act, so a call
 * that ran to its end twice leaves two lines. The next call is the first whose tag is not in the
 * prompt yet (the call, its result or a summary of them); with none left, the model calls finish.
 */
import type { ChatRequestBody, TestTurn } from '../support/openai-test-server';

/** What kind of goal: tools only, a compaction in the middle, or a background job. */
export type GoalKind = 'plain' | 'compaction' | 'jobs';

/** One goal of the test. */
export interface GoalPlan {
  tag: string;
  kind: GoalKind;
  /** Tags of its bash calls, in order. */
  calls: string[];
}

/** Calls per goal: enough model steps that the goals are still running through every fault. */
export const CALLS_PER_GOAL = 8;
/** Calls of the goals compacted mid-run. */
export const CALLS_PER_COMPACTED_GOAL = 14;
/** How long each model answer streams: keeps 20 goals in flight for the faults, not for minutes. */
export const MODEL_DELAY_MS = 1_200;
/** How long a background job runs before it writes its marker. */
const JOB_SECONDS = 1;
/** A line of every summary this model writes: how a compacted goal knows its compaction happened. */
const SUMMARY_MARK = 'SUMMARIZED-BY-CLUSTER-MODEL';
/** Reads of a job's output before the model gives up waiting for it (a job killed with its host). */
const MAX_JOB_READS = 8;

/** The 20 goals: 12 plain, 4 compacted mid-run, 4 with a background job. */
export function goalPlans(): GoalPlan[] {
  return Array.from({ length: 20 }, (_, i) => {
    const tag = `G${String(i + 1).padStart(2, '0')}`;
    const kind: GoalKind = i < 12 ? 'plain' : i < 16 ? 'compaction' : 'jobs';
    // The compacted goals run longer: their compaction comes after five calls, with calls still to come.
    const count = kind === 'compaction' ? CALLS_PER_COMPACTED_GOAL : CALLS_PER_GOAL;
    return { tag, kind, calls: Array.from({ length: count }, (_, k) => `${tag}-C${k + 1}`) };
  });
}

/** The objective a goal is started with; the model finds the goal's tag in it. */
export function objectiveOf(plan: GoalPlan): string {
  return `cluster goal ${plan.tag} (${plan.kind}): run the tagged calls`;
}

/** A command that leaves its marker as its last act. */
function markerCommand(callTag: string): string {
  return `mkdir -p marks && echo "working on ${callTag}" && echo DONE:${callTag} >> marks/${callTag}`;
}

/** All the text of a request, where the tags are looked for. */
function requestText(body: ChatRequestBody): string {
  return JSON.stringify(body.messages ?? []);
}

/**
 * The model: the next call of the goal the request belongs to, or a summary for the summarizer.
 */
export function clusterModel(plans: GoalPlan[]) {
  const byTag = new Map(plans.map((plan) => [plan.tag, plan]));
  return async (body: ChatRequestBody): Promise<TestTurn> => {
    const text = requestText(body);
    // The summarizer's request has no tools: keep every tag it is shown, as a faithful summary does.
    if (!body.tools || body.tools.length === 0) {
      const tags = [...new Set(text.match(/DONE:G\d\d-C\d+/g) ?? [])];
      return {
        text: `## Goal\nRun the tagged calls (${SUMMARY_MARK}).\n## Decisions and findings\n${tags.join('\n')}\n`,
      };
    }
    const tag = /cluster goal (G\d\d)/.exec(text)?.[1];
    const plan = tag ? byTag.get(tag) : undefined;
    if (!plan) return { text: 'no cluster goal tag in this request' };
    const next = plan.calls.find((call) => !text.includes(`DONE:${call}`));
    // A goal to be compacted does not finish before its compaction: it waits, a second a step.
    if (!next && plan.kind === 'compaction' && !text.includes(SUMMARY_MARK)) {
      return { delayMs: MODEL_DELAY_MS, toolCalls: [{ name: 'bash', args: { command: 'sleep 1' } }] };
    }
    if (!next) {
      return {
        delayMs: MODEL_DELAY_MS,
        toolCalls: [
          { name: 'finish', args: { status: 'complete', summary: `all calls of ${plan.tag} ran` } },
        ],
      };
    }
    // The jobs goals run their second call as a background job, and read its output until it says it
    // finished (its words are split in the command, so only the job's output has them whole).
    const job = plan.kind === 'jobs' ? plan.calls[1] : undefined;
    if (job && next === plan.calls[2] && !text.includes(`JOB-FINISHED ${job}`)) {
      const reads = text.split('"job-output"').length - 1;
      if (reads < MAX_JOB_READS) {
        return {
          delayMs: MODEL_DELAY_MS,
          toolCalls: [{ name: 'job-output', args: { job_id: 'job-1', offset: 0 } }],
        };
      }
    }
    if (next === job) {
      const command = `sleep ${JOB_SECONDS} && ${markerCommand(next)} && echo "JOB-FINISHED" "${next}"`;
      return {
        delayMs: MODEL_DELAY_MS,
        toolCalls: [{ name: 'bash', args: { command, run_in_background: true } }],
      };
    }
    return { delayMs: MODEL_DELAY_MS, toolCalls: [{ name: 'bash', args: { command: markerCommand(next) } }] };
  };
}
