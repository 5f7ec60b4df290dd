/**
 * Named model providers with a default, so configuration can say `model: 'fast'` and tests can
 * swap a scripted provider in under the same name.
 */
import { ConfigurationError } from '../core/errors.ts';
import type { InferenceProvider } from '../core/provider.ts';

export interface ProviderRegistry {
  /** Add a provider under `name`; the first one registered is the default until `setDefault`. */
  register(name: string, provider: InferenceProvider): ProviderRegistry;
  /** The provider called `name`; a ConfigurationError listing the known names otherwise. */
  get(name: string): InferenceProvider;
  has(name: string): boolean;
  /** Make `name` (already registered) the default. */
  setDefault(name: string): void;
  /** The default provider; a ConfigurationError when none is registered. */
  readonly default: InferenceProvider;
  /** Registered names, in registration order. */
  names(): string[];
}

/**
 * Create an empty registry. Lookups go through a Map, so names like `__proto__` are plain keys.
 *
 * @example
 * ```ts
 * const providers = createProviderRegistry()
 *   .register('openai', openAICompatible())
 *   .register('local', openAICompatible({ baseURL: 'http://127.0.0.1:11434/v1', model: 'llama3.2' }));
 * providers.setDefault('local');
 * await providers.default.complete({ messages: [{ role: 'user', content: 'hi' }] });
 * ```
 */
export function createProviderRegistry(): ProviderRegistry {
  const providers = new Map<string, InferenceProvider>();
  let defaultName: string | undefined;

  const known = (): string => (providers.size === 0 ? 'none are registered' : `known: ${[...providers.keys()].join(', ')}`);
  const lookup = (name: string): InferenceProvider => {
    const provider = providers.get(name);
    if (provider === undefined) {
      throw new ConfigurationError(`No model provider named "${name}" (${known()}). Register it with registry.register("${name}", provider).`);
    }
    return provider;
  };

  const registry: ProviderRegistry = {
    register(name, provider) {
      if (name === '') throw new ConfigurationError('A provider name must not be empty.');
      // Silently replacing a provider would reroute calls nobody asked to reroute.
      if (providers.has(name)) throw new ConfigurationError(`A model provider named "${name}" is already registered; use another name.`);
      providers.set(name, provider);
      defaultName ??= name;
      return registry;
    },
    get: lookup,
    has: (name) => providers.has(name),
    setDefault(name) {
      lookup(name);
      defaultName = name;
    },
    get default() {
      if (defaultName === undefined) {
        throw new ConfigurationError('No model provider is registered. Register one with registry.register(name, provider).');
      }
      return lookup(defaultName);
    },
    names: () => [...providers.keys()],
  };
  return registry;
}
