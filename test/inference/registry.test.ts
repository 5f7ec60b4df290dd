import { describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../src/core/errors.ts';
import { createProviderRegistry } from '../../src/inference/index.ts';
import type { InferenceProvider } from '../../src/inference/index.ts';

function fakeProvider(name: string): InferenceProvider {
  return {
    name,
    defaultModel: `${name}-model`,
    supportsNativeTools: true,
    supportsStructuredOutput: false,
    complete: async () => ({ text: name, toolCalls: [], finishReason: 'stop', usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0 }, model: name }),
    stream: async function* () {},
  };
}

describe('provider registry', () => {
  it('returns providers by name and defaults to the first registered', () => {
    const a = fakeProvider('a');
    const b = fakeProvider('b');
    const registry = createProviderRegistry().register('fast', a).register('smart', b);
    expect(registry.get('smart')).toBe(b);
    expect(registry.default).toBe(a);
    expect(registry.names()).toEqual(['fast', 'smart']);
    expect(registry.has('fast')).toBe(true);
  });

  it('switches the default with setDefault', () => {
    const b = fakeProvider('b');
    const registry = createProviderRegistry().register('a', fakeProvider('a')).register('b', b);
    registry.setDefault('b');
    expect(registry.default).toBe(b);
  });

  it('fails on an unknown name with a ConfigurationError listing the known names', () => {
    const registry = createProviderRegistry().register('fast', fakeProvider('a')).register('smart', fakeProvider('b'));
    expect(() => registry.get('cheap')).toThrow(ConfigurationError);
    expect(() => registry.get('cheap')).toThrow(/known: fast, smart/);
    expect(() => registry.setDefault('cheap')).toThrow(ConfigurationError);
    expect(registry.default.name).toBe('a');
  });

  it('treats prototype names as plain, unknown keys', () => {
    const registry = createProviderRegistry();
    for (const name of ['__proto__', 'constructor', 'toString']) expect(() => registry.get(name)).toThrow(ConfigurationError);
    const p = fakeProvider('p');
    registry.register('__proto__', p);
    expect(registry.get('__proto__')).toBe(p);
  });

  it('refuses duplicate names and an empty default', () => {
    const registry = createProviderRegistry();
    expect(() => registry.default).toThrow(/No model provider is registered/);
    registry.register('a', fakeProvider('a'));
    expect(() => registry.register('a', fakeProvider('other'))).toThrow(/already registered/);
    expect(() => registry.register('', fakeProvider('x'))).toThrow(ConfigurationError);
  });
});
