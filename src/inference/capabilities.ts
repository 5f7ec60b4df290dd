/**
 * What a model accepts and needs on the chat-completions wire, by model id. One table instead of
 * `if (model.startsWith('o1'))` scattered around: OpenAI's reasoning models reject `max_tokens`
 * (they take `max_completion_tokens`) and a non-default `temperature`, and DeepSeek's thinking
 * mode rejects a tool-call turn sent back without its `reasoning_content`.
 */
import type { ReasoningEffort } from '../core/provider.ts';

export interface ModelCapabilities {
  /** The request field that caps the reply: `max_tokens` (every compatible server) or `max_completion_tokens`. */
  readonly maxTokensParam?: 'max_tokens' | 'max_completion_tokens';
  /** False for models that reject `temperature` (OpenAI's reasoning models): it is then left out. */
  readonly temperature?: boolean;
  /** The model takes `reasoning_effort`; a request's `reasoningEffort` (else this default) is sent. */
  readonly reasoningEffort?: boolean | ReasoningEffort;
  /** Send the model's own `reasoning_content` back on its assistant messages (DeepSeek thinking mode requires it). */
  readonly sendReasoningBack?: boolean;
}

/**
 * Capabilities by model id. A key ending in `*` matches ids starting with the rest; otherwise the
 * id must equal it. The id is also tried without a gateway prefix (`openai/o3` → `o3`).
 */
export type ModelCapabilityTable = Readonly<Record<string, ModelCapabilities>>;

const OPENAI_REASONING: ModelCapabilities = { maxTokensParam: 'max_completion_tokens', temperature: false, reasoningEffort: true };

/**
 * The built-in table: OpenAI's o-series and gpt-5 reasoning models, and DeepSeek's models (whose
 * thinking mode, `deepseek-reasoner` or a thinking-enabled `deepseek-chat`, needs its reasoning
 * back). Extend or override it with the provider's `models` option.
 *
 * @example
 * ```ts
 * capabilitiesOf('o4-mini-2025-04-16'); // { maxTokensParam: 'max_completion_tokens', temperature: false, reasoningEffort: true }
 * ```
 */
export const DEFAULT_MODEL_CAPABILITIES: ModelCapabilityTable = Object.freeze({
  'o1*': OPENAI_REASONING,
  'o3*': OPENAI_REASONING,
  'o4*': OPENAI_REASONING,
  'gpt-5*': OPENAI_REASONING,
  // The chat variant of gpt-5 is not a reasoning model: it samples with a temperature.
  'gpt-5-chat*': { maxTokensParam: 'max_completion_tokens' },
  'deepseek-*': { sendReasoningBack: true },
});

/**
 * The capabilities of `model`: the most specific matching entry of `table` (exact ids first,
 * then the longest prefix), merged over the built-in entry the same way. Own keys only.
 *
 * @example
 * ```ts
 * capabilitiesOf('my-o3-proxy', { 'my-o3-proxy': { maxTokensParam: 'max_completion_tokens' } }).maxTokensParam; // 'max_completion_tokens'
 * ```
 */
export function capabilitiesOf(model: string, table: ModelCapabilityTable = {}): ModelCapabilities {
  return { ...lookup(model, DEFAULT_MODEL_CAPABILITIES), ...lookup(model, table) };
}

function lookup(model: string, table: ModelCapabilityTable): ModelCapabilities {
  const bare = model.includes('/') ? model.slice(model.lastIndexOf('/') + 1) : model;
  for (const id of [model, bare]) {
    if (Object.hasOwn(table, id)) return table[id] as ModelCapabilities;
  }
  let best: { length: number; entry: ModelCapabilities } | undefined;
  for (const [key, entry] of Object.entries(table)) {
    if (!key.endsWith('*')) continue;
    const prefix = key.slice(0, -1);
    if ((model.startsWith(prefix) || bare.startsWith(prefix)) && (best === undefined || prefix.length > best.length)) {
      best = { length: prefix.length, entry };
    }
  }
  return best?.entry ?? {};
}
