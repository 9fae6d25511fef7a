/**
 * `goalrun doctor`: checks bubblewrap (and that it starts a sandbox here), ripgrep, the temporal
 * CLI, the database and the provider keys, one line each; each missing item names its fix.
 * Exits 1 when something a goal cannot run without is missing.
 */
import { type DoctorCheck, formatDoctorLine, runDoctorChecks } from '../../activities/sandbox/doctor';
import type { SandboxMode } from '../../core/sandbox-settings';
import type { CliContext } from '../context';
import { ExitCode } from '../exit-codes';
import { printJson, say } from '../output';
import { findTemporalBinary } from '../temporal-binary';

/** Options of `goalrun doctor`. */
export interface DoctorOptions {
  json?: boolean;
  /** The sandbox mode goals will use (`--sandbox`); with `off`, bubblewrap is optional. */
  sandbox?: SandboxMode;
}

/** Runs the checks and prints them; the exit code says whether a required item is missing. */
export async function doctorCommand(context: CliContext, options: DoctorOptions = {}): Promise<number> {
  const { settings } = context;
  const checks: DoctorCheck[] = await runDoctorChecks({
    env: process.env,
    home: settings.home,
    databaseUrl: settings.databaseUrl,
    describeStore: context.describeStore(),
    sandboxMode: options.sandbox,
    findTemporalBinary,
  });
  if (options.json) printJson({ checks });
  else for (const check of checks) say(formatDoctorLine(check));
  return checks.some((check) => check.required && !check.ok) ? ExitCode.failedOrBlocked : ExitCode.completed;
}
