/**
 * `goalrun clean`: removes old stopped sessions (issue 17, retention). A dry run unless --yes: it
 * prints what would go and keeps everything. It never touches a session that may still run, keeps the
 * newest N stopped sessions of each project and named ones unless --include-named; each session is
 * removed in one store transaction under its operation lock, then its closed workflow executions are
 * deleted from Temporal (activities/clean-sessions.ts, shared with the scheduled clean, which also deletes its workspace snapshot refs). `--schedule`
 * shows the daily clean that a configured `retention` runs (cli/retention-schedule.ts).
 */

import { type CleanScope, chooseSessions, removeSessions } from '../../activities/clean-sessions';
import { ConfigError } from '../../core/errors';
import { DEFAULT_RETENTION_KEEP, parseRetentionDuration } from '../../core/retention';
import type { SessionRow, SessionStore } from '../../store/types';
import type { CliContext } from '../context';
import { resolveWorkspace } from '../goal-options';
import { notice, printJson, say } from '../output';
import { projectHashesOf } from '../session-names';
import { sessionLine, summariesOf } from '../session-summary';

/** Options of `goalrun clean`. */
export interface CleanOptions {
  olderThan?: string;
  keep?: string;
  project?: string;
  all?: boolean;
  includeNamed?: boolean;
  yes?: boolean;
  json?: boolean;
  /** Show the daily clean a configured retention runs (a Temporal Schedule) instead of cleaning. */
  schedule?: boolean;
}

export async function cleanCommand(context: CliContext, options: CleanOptions): Promise<number> {
  if (options.project && options.all) throw new ConfigError('give --project DIR or --all, not both');
  const olderThanMs = options.olderThan === undefined ? undefined : parseRetentionDuration(options.olderThan);
  if (olderThanMs === null)
    throw new ConfigError(
      `--older-than must be a duration like 30d, 12h, 90m or 2w, got "${options.olderThan}"`,
    );
  const keep = options.keep === undefined ? DEFAULT_RETENTION_KEEP : Number(options.keep);
  if (!Number.isInteger(keep) || keep < 0)
    throw new ConfigError(`--keep must be a whole number, got "${options.keep}"`);
  if (options.schedule) {
    const { showRetentionSchedule } =
      require('../retention-schedule') as typeof import('../retention-schedule');
    return showRetentionSchedule(context, options.json === true, options.yes === true);
  }
  const scope: CleanScope = {
    store: await context.sessionStore(),
    client: await context.temporal(),
    namespace: context.settings.namespace,
    projectHashes: options.all ? null : projectHashesOf(resolveWorkspace(options.project)),
    rule: { olderThanMs, keep, includeNamed: options.includeNamed === true, now: new Date() },
    note: notice,
  };
  const chosen = await chooseSessions(scope);
  if (!options.yes) return report(scope.store, chosen, false, options.json);
  const removed = await removeSessions(scope, chosen);
  return report(scope.store, removed, true, options.json);
}

async function report(
  store: SessionStore,
  rows: SessionRow[],
  done: boolean,
  json?: boolean,
): Promise<number> {
  const summaries = await summariesOf(store, rows);
  if (json) {
    printJson({ dryRun: !done, sessions: summaries });
    return 0;
  }
  if (rows.length === 0) {
    say(done ? 'removed nothing' : 'nothing to clean');
    return 0;
  }
  say(
    done
      ? `removed ${rows.length} session${rows.length === 1 ? '' : 's'}:`
      : `would remove ${rows.length} session${rows.length === 1 ? '' : 's'} (a dry run: nothing was removed; add --yes):`,
  );
  for (const summary of summaries) say(`  ${sessionLine(summary)}  (${summary.projectDir})`);
  return 0;
}
