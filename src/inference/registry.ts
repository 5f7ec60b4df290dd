/** Configuration can say `model: 'fast'`, and tests can swap a scripted provider in under the same name. */
import { ConfigurationError } from '../core/errors.ts';
import type { InferenceProvider } from '../core/provider.ts';

export interface ProviderRegistry {
  /** The first one registered is the default until `setDefault`. */
  register(name: string, provider: InferenceProvider): ProviderRegistry;
  get(name: string): InferenceProvider;
  has(name: string): boolean;
  setDefault(name: string): void;
  readonly default: InferenceProvider;
  names(): string[];
}

/**
 * @example
 * ```ts
 * const providers = createProviderRegistry().register('local', openAICompatible({ baseURL: 'http://127.0.0.1:11434/v1' }));
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
