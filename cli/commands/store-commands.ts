/** `goalrun store status | stop`: the embedded PostgreSQL store that goalrun runs when no DATABASE_URL is set. */
import { embeddedStoreStatus, stopEmbeddedStore } from '../../store/open';
import type { CliContext } from '../context';
import { printJson, say } from '../output';

/** `goalrun store status [--json]`. */
export async function storeStatusCommand(context: CliContext, options: { json?: boolean }): Promise<number> {
  if (context.settings.databaseUrl) {
    const text = `the store is ${context.describeStore()} (DATABASE_URL); the embedded store is not in use`;
    if (options.json) printJson({ embedded: false, store: context.describeStore() });
    else say(text);
    return 0;
  }
  const status = embeddedStoreStatus(context.settings.home);
  if (options.json) {
    printJson({ embedded: true, ...status });
    return 0;
  }
  say(`embedded PostgreSQL store in ${status.dir}`);
  for (const [label, value] of Object.entries(status)) {
    if (label !== 'dir' && value !== undefined && value !== null)
      say(`  ${label.padEnd(13)} ${String(value)}`);
  }
  say(`  connect with: PGPASSWORD=$(cat ${status.passwordFile}) psql '${status.url ?? ''}'`);
  return 0;
}

/** `goalrun store stop`: stops the embedded store's server (running workers lose their connection). */
export async function storeStopCommand(context: CliContext): Promise<number> {
  const stopped = await stopEmbeddedStore(context.settings.home);
  say(stopped ? 'stopped the embedded store' : 'the embedded store was not running');
  return 0;
}
