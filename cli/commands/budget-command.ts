/**
 * `goalrun budget [--json]` and `goalrun budget set --daily-usd N|off`: the store-wide daily money
 * budget (issue 18 item 4, store/daily-budget.ts). It is kept in the store, so every worker and CLI
 * of the store sees the same cap and the same ledger; the day is the UTC day. Every paid call is in
 * the ledger whether or not a cap is set (store/paid-calls.ts), so a cap set at noon counts the morning.
 */
import { ConfigError } from '../../core/errors';
import { usd } from '../../core/spend-cap';
import type { CliContext } from '../context';
import { printJson, say } from '../output';

/** The word that turns the daily budget off. */
const OFF = 'off';

/** `--daily-usd N|off` as dollars, or null for off; a ConfigError naming the problem otherwise. */
export function parseDailyUsd(value: string | undefined): number | null {
  if (value === undefined)
    throw new ConfigError('budget set needs --daily-usd N (dollars) or --daily-usd off');
  if (value.trim().toLowerCase() === OFF) return null;
  const amount = Number(value);
  if (value.trim() === '' || !Number.isFinite(amount) || amount < 0)
    throw new ConfigError(`--daily-usd must be a number of dollars (0 or more) or "off", got "${value}"`);
  return amount;
}

/** `goalrun budget set --daily-usd N|off`. */
export async function budgetSetCommand(
  context: CliContext,
  options: { dailyUsd?: string; json?: boolean },
): Promise<number> {
  const capUsd = parseDailyUsd(options.dailyUsd);
  const store = await context.sessionStore();
  await store.setDailyCap(capUsd);
  if (options.json) printJson({ capUsd });
  else say(capUsd === null ? 'daily budget off' : `daily budget set to ${usd(capUsd)} per UTC day`);
  return 0;
}

/** `goalrun budget [--json]`: today's cap, spent, reserved, and the spend per goal and model. */
export async function budgetShowCommand(context: CliContext, options: { json?: boolean }): Promise<number> {
  const view = await (await context.sessionStore()).dailyBudgetView();
  if (options.json) {
    printJson(view);
    return 0;
  }
  const cap = view.capUsd === null ? 'none (goalrun budget set --daily-usd N)' : usd(view.capUsd);
  say(
    `daily budget ${view.day} (UTC): cap ${cap}, ${usd(view.spentUsd)} spent, ${usd(view.reservedUsd)} reserved`,
  );
  say(`  the window ends ${view.nextWindowAt}`);
  if (view.lines.length === 0) say('  no spend today');
  for (const line of view.lines) {
    // Retries: attempts the provider billed that gave no answer the goal used (a stalled stream…).
    const retries = line.retries > 0 ? ` (${line.retries} billed without an answer)` : '';
    say(
      `  ${line.sessionId}  ${line.model}  ${usd(line.spentUsd)} spent, ${usd(line.reservedUsd)} reserved, ${line.calls} calls${retries}`,
    );
  }
  return 0;
}
