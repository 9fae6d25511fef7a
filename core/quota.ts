/**
 * Quota-aware waiting (issue 18): some provider errors mean "your account is out of quota or rate
 * budget until time T", not "try again in a second". Those are told apart here, so the goal waits on
 * a durable timer until T (status waiting_quota) or, when T is unknown, pauses, instead of burning
 * its retries or failing. Pure, so the provider error mapping and the tests share it.
 */

/** A 429 whose Retry-After is at least this long is a quota, not a short rate-limit back-off. */
export const QUOTA_RETRY_AFTER_MIN_MS = 5 * 60_000;

/** Statuses a quota answer comes with (429 Too Many Requests, 402 Payment Required). */
const QUOTA_STATUSES = new Set([402, 429]);

/** What providers write in a quota or usage-limit body. */
const QUOTA_BODY =
  /insufficient_quota|exceeded your current quota|usage[ _-]limit|quota[ _-](?:exceeded|exhausted)|billing[ _-]hard[ _-]limit|credit balance is too low/i;

/** A reset time in a body: `"resets_at": "2026-12-02T07:00:00Z"`, `reset at 2026-…`, or epoch seconds. */
const RESET_ISO = /reset[a-z_ ]*["']?\s*[:=]?\s*["']?(\d{4}-\d{2}-\d{2}T[0-9:.]+(?:Z|[+-]\d{2}:?\d{2}))/i;
const RESET_EPOCH = /reset[a-z_]*["']?\s*[:=]\s*(\d{10})\b/i;

/** The provider's quota is exhausted; `resetAtMs` is when it said it comes back (null: it did not say). */
export interface QuotaExhausted {
  resetAtMs: number | null;
}

/** Whether an HTTP error is a quota that lasts, and until when. */
export function quotaOf(
  status: number,
  body: string,
  retryAfterMs: number | undefined,
  nowMs: number,
): QuotaExhausted | null {
  if (!QUOTA_STATUSES.has(status)) return null;
  const longWait = retryAfterMs !== undefined && retryAfterMs >= QUOTA_RETRY_AFTER_MIN_MS;
  if (!QUOTA_BODY.test(body) && !longWait) return null;
  if (retryAfterMs !== undefined) return { resetAtMs: nowMs + retryAfterMs };
  return { resetAtMs: resetFromBody(body, nowMs) };
}

function resetFromBody(body: string, nowMs: number): number | null {
  const iso = RESET_ISO.exec(body);
  if (iso) {
    const at = Date.parse(iso[1]);
    if (!Number.isNaN(at)) return Math.max(at, nowMs);
  }
  const epoch = RESET_EPOCH.exec(body);
  if (epoch) return Math.max(Number(epoch[1]) * 1000, nowMs);
  return null;
}
