/**
 * `goalrun jobs <id>`: read-only, so, like `status`, it reads Temporal through the HTTP API when one
 * is known and loads no gRPC client (issue 10).
 */
import { ConfigError } from '../../core/errors';
import type { JobRecord } from '../../core/jobs-registry';
import { renderJobs, withGoneHosts } from '../../core/jobs-registry';
import { JOBS_QUERY, workflowIdOf } from '../../core/workflow-names';
import type { CliContext } from '../context';
import { resolveSessionId } from '../goal-id';
import { queryWithTimeout, workflowStatus } from '../goal-status';
import { notice, printJson, say } from '../output';
import type { TemporalReader } from '../temporal-reader';
import { livePollers } from '../worker-presence';

/** `goalrun jobs <id>`: the goal's background jobs. */
export async function jobsCommand(
  context: CliContext,
  id: string | undefined,
  options: { json?: boolean; last?: boolean },
): Promise<number> {
  context.prepareTemporalReader();
  const sessionId = await resolveSessionId(context, { id, last: options.last });
  const reader = await context.temporalReader();
  if (!reader || (await workflowStatus(reader, sessionId)) !== 'RUNNING') {
    throw new ConfigError(`goal ${sessionId} is not running; its background jobs ended with it`);
  }
  let jobs = await queryWithTimeout(() => reader.query(workflowIdOf(sessionId), JOBS_QUERY));
  if (jobs === null) {
    // No worker answers (a query needs one): the registry as the goal last saved it.
    const row = await (await context.sessionStore()).findSession(sessionId);
    const saved = (row?.goalState as { jobs?: JobRecord[] } | null | undefined)?.jobs;
    if (!saved) {
      throw new ConfigError(
        `goal ${sessionId} did not answer (no worker runs it?) and has no saved jobs yet`,
      );
    }
    notice(`no worker answered for goal ${sessionId}; these are its jobs as it last saved them`);
    jobs = saved;
  }
  const gone = await goneHosts(reader, jobs);
  if (gone.size > 0) {
    jobs = withGoneHosts(jobs, gone);
    notice('jobs shown lost: their tool host no longer polls (the goal records it when it next uses them)');
  }
  if (options.json) printJson(jobs);
  else say(renderJobs(jobs, Date.now()));
  return 0;
}

/** The process queues of running jobs that no live worker polls any more. */
async function goneHosts(reader: TemporalReader, jobs: JobRecord[]): Promise<Set<string>> {
  const queues = [...new Set(jobs.filter((job) => job.status === 'running').map((job) => job.processQueue))];
  const gone = new Set<string>();
  await Promise.all(
    queues.map(async (queue) => {
      const pollers = await livePollers(reader, queue, Date.now(), true).catch(() => null);
      if (pollers === 0) gone.add(queue);
    }),
  );
  return gone;
}
