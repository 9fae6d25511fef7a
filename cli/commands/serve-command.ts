/**
 * `goalrun serve`: one page for every goal of the store, for a person on a phone or another tab —
 * what needs them first, the actions they need (approve, deny, steer, pause, raise, cancel), live.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { ConfigError } from '../../core/errors';
import { workflowIdOf } from '../../core/workflow-names';
import type { CliContext } from '../context';
import { notice, say } from '../output';
import { createServeServer } from '../serve/serve-server';
import { serveToken } from '../serve/serve-token';
import { webUiUrl } from '../web-ui';

/** The port `serve` listens on unless told. */
export const DEFAULT_SERVE_PORT = 8399;
/** How long the transcript of a goal's page may take to read. */
const TRANSCRIPT_TIMEOUT_MS = 30_000;
/** Largest transcript shown on a goal's page (the rest: `goalrun transcript`). */
const TRANSCRIPT_MAX_BYTES = 2 * 1024 * 1024;

/** `goalrun serve [--port N] [--host H]`: serves until interrupted. */
export async function serveCommand(
  context: CliContext,
  options: { port?: string; host?: string },
): Promise<number> {
  const port = options.port === undefined ? DEFAULT_SERVE_PORT : Number(options.port);
  if (!Number.isInteger(port) || port < 0 || port > 65_535)
    throw new ConfigError(`--port must be a port number (0-65535), got "${options.port}"`);
  const host = options.host ?? '127.0.0.1';
  const store = await context.sessionStore();
  const token = serveToken(context.settings.home);
  const server = createServeServer({
    token,
    store,
    transcript: (sessionId) => transcriptOf(sessionId),
    webUiUrl: (sessionId) => webUiUrl(context.settings, workflowIdOf(sessionId)),
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) =>
      reject(
        err.code === 'EADDRINUSE'
          ? new ConfigError(`port ${port} is in use; pick another with --port`)
          : new ConfigError(`cannot listen on ${host}:${port}: ${err.message}`),
      ),
    );
    server.listen(port, host, resolve);
  });
  const bound = (server.address() as { port: number }).port;
  if (host !== '127.0.0.1' && host !== 'localhost' && host !== '::1')
    notice(
      `listening on ${host}: anyone who can reach this machine and has the link can act on your goals; prefer 127.0.0.1 behind your own tunnel (docs/deploying.md)`,
    );
  const shownHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  say(`goalrun serve: http://${shownHost}:${bound}/?token=${token}`);
  say(
    'Ctrl-C stops it; the link stays valid across restarts (the token is kept in $GOALRUN_HOME/serve-token)',
  );
  await new Promise<void>((resolve) => {
    const stop = () => {
      server.close(() => resolve());
      // Open pages hold their live stream and keep-alive connections: closed, not waited for.
      server.closeAllConnections();
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  return 0;
}

/** A goal's transcript, from this goalrun's own `transcript` command. */
function transcriptOf(sessionId: string): Promise<string> {
  const main = path.join(__dirname, '..', 'main.js');
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [main, 'transcript', sessionId],
      { timeout: TRANSCRIPT_TIMEOUT_MS, maxBuffer: TRANSCRIPT_MAX_BYTES },
      (err, stdout, stderr) =>
        resolve(err ? `(no transcript: ${stderr.trim() || (err as Error).message})` : stdout),
    );
  });
}
