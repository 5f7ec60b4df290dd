import { describe, expect, it } from 'vitest';
import { capabilitiesOf } from '../../src/inference/capabilities.ts';

describe('model capabilities', () => {
  it('finds a reasoning model by prefix, also behind a gateway prefix and with a date suffix', () => {
    for (const model of ['o3-mini', 'openai/o3-mini', 'o4-mini-2025-04-16', 'gpt-5-nano-2025-08-07']) {
      expect(capabilitiesOf(model), model).toEqual({ maxTokensParam: 'max_completion_tokens', temperature: false, reasoningEffort: true });
    }
  });

  it('takes the most specific prefix: the chat variant of gpt-5 keeps its temperature', () => {
    expect(capabilitiesOf('gpt-5-chat-latest')).toEqual({ maxTokensParam: 'max_completion_tokens' });
  });

  it('leaves chat models and unknown local models alone', () => {
    for (const model of ['gpt-4.1-mini', 'llama3.2', 'mistral-small-latest', 'hf.co/bartowski/Mistral-Small-24B-Instruct-2501-GGUF:Q4_K_L']) {
      expect(capabilitiesOf(model), model).toEqual({});
    }
  });

  it("lets the user's table add models and override built-in entries, field by field", () => {
    const table = { 'my-reasoner': { maxTokensParam: 'max_completion_tokens' as const }, 'o3*': { reasoningEffort: 'high' as const } };
    expect(capabilitiesOf('my-reasoner', table)).toEqual({ maxTokensParam: 'max_completion_tokens' });
    expect(capabilitiesOf('o3-pro', table)).toEqual({ maxTokensParam: 'max_completion_tokens', temperature: false, reasoningEffort: 'high' });
    expect(capabilitiesOf('deepseek-reasoner', { 'deepseek-reasoner': { sendReasoningBack: false } })).toEqual({ sendReasoningBack: false });
  });

  it('ignores inherited keys', () => {
    expect(capabilitiesOf('__proto__')).toEqual({});
    expect(capabilitiesOf('constructor')).toEqual({});
  });
});
