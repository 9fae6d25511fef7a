import { describe, expect, it } from 'vitest';
import {
  APP_COMMANDS,
  AppCommandError,
  appCommandHelp,
  isAppCommand,
  MAX_SESSION_NAME_CHARS,
  parseAppCommand,
} from '../../core/app-commands';

describe('isAppCommand', () => {
  it('is a text starting with a slash, leading blanks allowed', () => {
    expect(isAppCommand('/pause')).toBe(true);
    expect(isAppCommand('  /help')).toBe(true);
    expect(isAppCommand('please run /usr/bin/env')).toBe(false);
    expect(isAppCommand('')).toBe(false);
  });
});

describe('parseAppCommand', () => {
  it('parses every command the help lists', () => {
    expect(parseAppCommand('/compact')).toEqual({ name: 'compact' });
    expect(parseAppCommand('/compact  the auth   middleware ')).toEqual({
      name: 'compact',
      topic: 'the auth   middleware',
    });
    expect(parseAppCommand('/pause')).toEqual({ name: 'pause' });
    expect(parseAppCommand('/unpause')).toEqual({ name: 'unpause' });
    expect(parseAppCommand('/limits max_steps=40 max_minutes=90')).toEqual({
      name: 'limits',
      limits: { maxSteps: 40, maxMinutes: 90 },
    });
    expect(parseAppCommand('/limits max_cost_usd=0.50 max_tokens=20000')).toEqual({
      name: 'limits',
      limits: { maxCostUsd: 0.5, maxTokens: 20_000 },
    });
    expect(() => parseAppCommand('/limits max_cost_usd=-1')).toThrow(/positive amount of US dollars/);
    expect(() => parseAppCommand('/limits max_cost_usd=1e3')).toThrow(/positive amount of US dollars/);
    expect(() => parseAppCommand('/limits max_tokens=1.5')).toThrow(/positive whole number/);
    expect(parseAppCommand('/model anthropic:claude-sonnet-4-5')).toEqual({
      name: 'model',
      model: 'anthropic:claude-sonnet-4-5',
    });
    expect(parseAppCommand('/rename  parser   rewrite')).toEqual({ name: 'rename', title: 'parser rewrite' });
    expect(parseAppCommand('/clear')).toEqual({ name: 'clear' });
    expect(parseAppCommand('/jobs')).toEqual({ name: 'jobs' });
    expect(parseAppCommand('/help')).toEqual({ name: 'help' });
    for (const command of APP_COMMANDS) expect(appCommandHelp()).toContain(command.usage);
  });

  it('rejects an unknown command and lists the known ones', () => {
    expect(() => parseAppCommand('/paws')).toThrow(AppCommandError);
    expect(() => parseAppCommand('/paws')).toThrow(/unknown command "\/paws".*\/pause.*\/help/);
    expect(() => parseAppCommand('/')).toThrow(/unknown command "\/"/);
  });

  it('rejects arguments where none are taken', () => {
    expect(() => parseAppCommand('/pause now')).toThrow('/pause takes no arguments (got "now")');
    expect(() => parseAppCommand('/clear everything')).toThrow(/takes no arguments/);
  });

  it('checks each limit by name and value', () => {
    expect(() => parseAppCommand('/limits')).toThrow(/usage: \/limits max_steps=N/);
    expect(() => parseAppCommand('/limits max_step=4')).toThrow('bad limit "max_step=4"');
    expect(() => parseAppCommand('/limits max_steps=0')).toThrow(
      'max_steps must be a positive whole number, got "0"',
    );
    expect(() => parseAppCommand('/limits max_steps=1.5')).toThrow(/positive whole number/);
    expect(() => parseAppCommand('/limits max_steps=-3')).toThrow(/positive whole number/);
    expect(() => parseAppCommand('/limits max_steps=3=4')).toThrow(/bad limit/);
    expect(() => parseAppCommand('/limits max_iterations')).toThrow(/bad limit/);
  });

  it('needs one model spec and a bounded name', () => {
    expect(() => parseAppCommand('/model')).toThrow(/usage: \/model SPEC/);
    expect(() => parseAppCommand('/model openai:a openai:b')).toThrow(/usage: \/model SPEC/);
    expect(() => parseAppCommand('/rename')).toThrow('usage: /rename NAME');
    expect(parseAppCommand(`/rename ${'x'.repeat(MAX_SESSION_NAME_CHARS)}`)).toMatchObject({
      name: 'rename',
    });
    expect(() => parseAppCommand(`/rename ${'x'.repeat(MAX_SESSION_NAME_CHARS + 1)}`)).toThrow(/at most/);
  });
});
