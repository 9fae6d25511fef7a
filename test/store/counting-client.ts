/** A store client for tests that counts the round trips a store operation makes. */
import type { SqlClient, SqlExecutor } from '../../store/sql';

/** A client counting its statements (those inside transactions, BEGIN and COMMIT included) and its workspace-context reads. */
export type CountingClient = SqlClient & { statements: number; contextReads: number };

/** Wraps `inner`, counting what passes through it. */
export function countingClient(inner: SqlClient): CountingClient {
  const counted: CountingClient = {
    statements: 0,
    contextReads: 0,
    async query<T>(text: string, params?: unknown[]) {
      count(text);
      return inner.query<T>(text, params);
    },
    exec: (script: string) => inner.exec(script),
    transaction: <T>(fn: (tx: SqlExecutor) => Promise<T>) =>
      inner.transaction((tx) => {
        // BEGIN and COMMIT are round trips too.
        counted.statements += 2;
        return fn({
          query: <R>(text: string, params?: unknown[]) => {
            count(text);
            return tx.query<R>(text, params);
          },
          exec: (script: string) => tx.exec(script),
        } as SqlExecutor);
      }),
    close: () => inner.close(),
  };
  function count(text: string): void {
    counted.statements++;
    if (/^SELECT .* FROM workspace_contexts/s.test(text.trim())) counted.contextReads++;
  }
  return counted;
}
