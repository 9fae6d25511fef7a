import { describe, expect, it } from 'vitest';
import { NoInlineSourceMapError, slimSourceMap } from '../../worker/bundle-source-map';

const inline = (map: unknown) =>
  `//# sourceMappingURL=data:application/json;base64,${Buffer.from(JSON.stringify(map)).toString('base64')}`;

/** The map the SDK would read back from a bundle (its extractSourceMap, in short). */
function mapOf(code: string): Record<string, unknown> {
  const tag = code.indexOf('base64,', code.lastIndexOf('//# sourceMappingURL=data:'));
  return JSON.parse(Buffer.from(code.slice(tag + 7).trimEnd(), 'base64').toString());
}

describe('slimSourceMap', () => {
  const map = {
    version: 3,
    file: 'workflow-bundle-abc.js',
    sources: ['webpack://a.js'],
    sourcesContent: ['const a = 1; // a long source'],
    names: [],
    mappings: 'AAAA',
  };
  const code = 'var a = 1;\n// a comment that mentions //# sourceMappingURL=data: in the code\nvar b = 2;\n';

  it('keeps the code, leaves an empty inline map with the same file, and returns the original map', () => {
    const slim = slimSourceMap(`${code}${inline(map)}\n`);
    expect(slim.code.startsWith(code)).toBe(true);
    expect(mapOf(slim.code)).toEqual({
      version: 3,
      file: 'workflow-bundle-abc.js',
      sources: [],
      names: [],
      mappings: '',
    });
    expect(JSON.parse(slim.map)).toEqual(map);
    expect(slim.code.length).toBeLessThan(code.length + inline(map).length);
  });

  it('is idempotent: slimming a slim bundle keeps it as it is', () => {
    const once = slimSourceMap(`${code}${inline(map)}`).code;
    expect(slimSourceMap(once).code).toBe(once);
  });

  it('refuses a bundle without an inline map', () => {
    expect(() => slimSourceMap('var a = 1;\n//# sourceMappingURL=bundle.js.map\n')).toThrow(
      NoInlineSourceMapError,
    );
    expect(() => slimSourceMap('var a = 1;\n')).toThrow(/no inline base64 source map/);
  });
});
