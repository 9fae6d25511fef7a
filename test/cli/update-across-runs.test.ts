/** An update that meets the end of a goal's run is sent again to the next run; a refusal is a clear error. */
import { WorkflowNotFoundError, WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { endedUnderIt, UPDATE_RUN_ATTEMPTS, updateAcrossRuns } from '../../cli/update-across-runs';
import { ConfigError } from '../../core/errors';

const ranOut = () =>
  new WorkflowUpdateFailedError(
    'Workflow Update failed',
    ApplicationFailure.create({
      message: 'Workflow Update failed because the Workflow completed before the Update completed.',
    }),
  );
const refused = () =>
  new WorkflowUpdateFailedError(
    'Workflow Update failed',
    ApplicationFailure.create({ message: 'no such command' }),
  );

describe('updates across runs', () => {
  it('tells an update that met the end of its run from a refusal', () => {
    expect(endedUnderIt(ranOut())).toBe(true);
    expect(endedUnderIt(new WorkflowNotFoundError('gone', 'goal-x', undefined))).toBe(true);
    expect(endedUnderIt(new Error('5 NOT_FOUND: workflow execution already completed'))).toBe(true);
    expect(endedUnderIt(refused())).toBe(false);
    expect(endedUnderIt(new Error('14 UNAVAILABLE: connection refused'))).toBe(false);
  });

  it('sends it again while the goal goes on, and answers with the run that took it', async () => {
    let sent = 0;
    const result = await updateAcrossRuns(
      'goal-x',
      async () => {
        sent++;
        if (sent === 1) throw ranOut();
        return 'compacted';
      },
      async () => true,
    );
    expect(result).toBe('compacted');
    expect(sent).toBe(2);
  });

  it('gives up with a clear error once the goal has ended, or after a few runs', async () => {
    let sent = 0;
    const ended = updateAcrossRuns(
      'goal-x',
      async () => {
        sent++;
        throw ranOut();
      },
      async () => false,
    );
    await expect(ended).rejects.toThrow(ConfigError);
    await expect(ended).rejects.toThrow(/goal goal-x ended its run before it could carry this out/);
    expect(sent).toBe(1);
    sent = 0;
    await expect(
      updateAcrossRuns(
        'goal-x',
        async () => {
          sent++;
          throw ranOut();
        },
        async () => true,
      ),
    ).rejects.toThrow(ConfigError);
    expect(sent).toBe(UPDATE_RUN_ATTEMPTS);
  });

  it("says the goal's own refusal in its words, and lets anything else through", async () => {
    await expect(
      updateAcrossRuns(
        'goal-x',
        async () => Promise.reject(refused()),
        async () => true,
      ),
    ).rejects.toThrow('goal goal-x refused it: no such command');
    const other = new Error('14 UNAVAILABLE: connection refused');
    await expect(
      updateAcrossRuns(
        'goal-x',
        async () => Promise.reject(other),
        async () => true,
      ),
    ).rejects.toBe(other);
  });
});
