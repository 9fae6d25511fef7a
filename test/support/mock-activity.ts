/** Running an activity in the SDK's MockActivityEnvironment with its result typed. */
import type { MockActivityEnvironment } from '@temporalio/testing';

/** `environment.run(fn, ...args)`, typed with what `fn` returns (the SDK's signature infers `unknown`). */
export function runActivity<A extends unknown[], R>(
  environment: MockActivityEnvironment,
  fn: (...args: A) => Promise<R>,
  ...args: A
): Promise<R> {
  return environment.run(fn, ...args) as Promise<R>;
}
