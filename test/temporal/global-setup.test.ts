import { describe, expect, inject, it } from 'vitest';
import { isTemporalReachable } from '../../cli/dev-server';
import { TEST_TEMPORAL_ADDRESS_ENV } from '../support/temporal-server';

describe('test/support/global-setup', () => {
  it('provides the address of a shared server that answers', async () => {
    const address = inject('temporalAddress');
    expect(inject('temporalNamespace')).toBe('default');
    expect(await isTemporalReachable(address)).toBe(true);
    expect(process.env[TEST_TEMPORAL_ADDRESS_ENV]).toBe(address);
  });
});
