/** The command lines `goalrun serve` makes of a request (cli/serve/serve-actions.ts): values are checked, never options. */
import { describe, expect, it } from 'vitest';
import { actionArgs, BadAction } from '../../cli/serve/serve-actions';

const ID = '3f2a9c0d1e4b-20261130T152151123Z';

describe('serve actions', () => {
  it('makes the CLI command of each action', () => {
    expect(actionArgs('approve', ID, {})).toEqual(['approve', ID, '--json']);
    expect(actionArgs('deny', ID, { reason: 'no' })).toEqual(['deny', ID, '--json', '--reason', 'no']);
    expect(actionArgs('steer', ID, { text: '--help' })).toEqual(['steer', ID, '--json', '--', '--help']);
    expect(actionArgs('limits', ID, { maxCostUsd: 2.5, maxSteps: '40' })).toEqual([
      'limits',
      ID,
      '--json',
      '--max-cost-usd',
      '2.5',
      '--max-steps',
      '40',
    ]);
  });

  it('refuses what is not a goal id, an action, or a number', () => {
    expect(() => actionArgs('approve', '--all', {})).toThrow(BadAction);
    expect(() => actionArgs('rm', ID, {})).toThrow(/unknown action/);
    expect(() => actionArgs('steer', ID, {})).toThrow(/needs "text"/);
    expect(() => actionArgs('limits', ID, { maxSteps: '1; rm -rf /' })).toThrow(/positive number/);
    expect(() => actionArgs('limits', ID, {})).toThrow(/needs one of/);
  });
});
