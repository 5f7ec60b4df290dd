/**
 * One table instead of `if (model.startsWith('o1'))` scattered around: reasoning models reject
 * `max_tokens` and `temperature`; DeepSeek's thinking mode needs its `reasoning_content` back.
 */
import type { ReasoningEffort } from '../core/provider.ts';

export interface ModelCapabilities {
  readonly maxTokensParam?: 'max_tokens' | 'max_completion_tokens';
  readonly temperature?: boolean;
  /** A request's `reasoningEffort` (else this default) is sent. */
  readonly reasoningEffort?: boolean | ReasoningEffort;
  readonly sendReasoningBack?: boolean;
  /**
   * `first`: every system message goes, joined in order, into one at the start, as Anthropic takes
   * them; for chat templates that raise on a later one (Qwen 3.5 and later). Learned from such a
   * refusal unless this says `anywhere`.
   */
  readonly systemMessages?: 'anywhere' | 'first';
}

/** A key ending in `*` is a prefix; ids are also tried without a gateway prefix. */
export type ModelCapabilityTable = Readonly<Record<string, ModelCapabilities>>;

const OPENAI_REASONING: ModelCapabilities = { maxTokensParam: 'max_completion_tokens', temperature: false, reasoningEffort: true };

export const DEFAULT_MODEL_CAPABILITIES: ModelCapabilityTable = Object.freeze({
  'o1*': OPENAI_REASONING,
  'o3*': OPENAI_REASONING,
  'o4*': OPENAI_REASONING,
  'gpt-5*': OPENAI_REASONING,
  // The chat variant of gpt-5 is not a reasoning model: it samples with a temperature.
  'gpt-5-chat*': { maxTokensParam: 'max_completion_tokens' },
  'deepseek-*': { sendReasoningBack: true },
});

/** Exact ids first, then the longest prefix, merged over the built-in entry the same way. Own keys only. */
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
