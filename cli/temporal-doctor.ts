/**
 * `goalrun doctor`'s two Temporal lines: the connection settings with where each came from (never the
 * API key itself), and whether the server answers with them, or the named cause and its fix.
 */
import type { DoctorCheck } from '../activities/sandbox/doctor';
import { ConfigError } from '../core/errors';
import { connectionProblem, problemOf } from '../worker/connection-errors';
import { describeConnectionSettings } from '../worker/connection-options';
import type { Settings } from '../worker/settings';
import { connectClient, explainConnectionFailure } from '../worker/temporal-connect';
import { isSecured, type TemporalConnectionSettings } from '../worker/temporal-connection';
import { mayStartDevServerAt } from './dev-server';
import { isTemporalReachable } from './temporal-address';

/** How long doctor waits for the server. */
const DOCTOR_CONNECT_TIMEOUT_MS = 5_000;

/** The variable the TypeScript SDK does not support, which the temporal CLI does. */
const HOST_VERIFICATION_ENV = 'TEMPORAL_TLS_DISABLE_HOST_VERIFICATION';

/** The settings line and the server line. */
export async function temporalDoctorChecks(
  settings: Settings,
  env: NodeJS.ProcessEnv,
): Promise<DoctorCheck[]> {
  let connection: TemporalConnectionSettings;
  try {
    connection = settings.temporal;
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    return [
      {
        name: 'Temporal connection',
        ok: false,
        required: true,
        detail: err.message,
        fix: 'correct the temporal.toml profile or the TEMPORAL_* variables (docs/deploying.md)',
      },
    ];
  }
  const ignored = env[HOST_VERIFICATION_ENV]
    ? `; ${HOST_VERIFICATION_ENV} is ignored (the TypeScript SDK always checks the server's name: set TEMPORAL_TLS_SERVER_NAME instead)`
    : '';
  return [
    {
      name: 'Temporal connection',
      ok: true,
      required: false,
      detail: describeConnectionSettings(connection) + ignored,
    },
    await serverCheck(connection, settings.home),
  ];
}

/** Whether the server answers with these settings, and if not, why. */
async function serverCheck(connection: TemporalConnectionSettings, home: string): Promise<DoctorCheck> {
  const name = 'Temporal server';
  const { address } = connection;
  const failed = (err: unknown): DoctorCheck => {
    const problem = problemOf(err) ?? connectionProblem(err, connection);
    return {
      name,
      ok: false,
      required: true,
      detail: problem?.cause ?? (err as Error).message,
      ...(problem ? { fix: problem.fix } : {}),
    };
  };
  if (!isSecured(connection) && !(await isTemporalReachable(address, DOCTOR_CONNECT_TIMEOUT_MS))) {
    if (mayStartDevServerAt(address, home)) {
      return {
        name,
        ok: true,
        required: false,
        detail: `nothing answers at ${address} yet: goalrun starts a local dev server there when a command needs one`,
      };
    }
    // A TLS server says so to the probe; anything else is a server that does not answer.
    return failed(await explainConnectionFailure(new Error('ECONNREFUSED'), connection));
  }
  try {
    const client = await connectClient(connection, DOCTOR_CONNECT_TIMEOUT_MS);
    try {
      const info = await client.workflowService.getSystemInfo({});
      await client.workflowService.describeNamespace({ namespace: connection.namespace });
      return {
        name,
        ok: true,
        required: false,
        detail: `answers at ${address}${info.serverVersion ? ` (server ${info.serverVersion})` : ''}; namespace ${connection.namespace} exists`,
      };
    } finally {
      await client.close().catch(() => undefined);
    }
  } catch (err) {
    return failed(err);
  }
}
