import { describe, expect, it } from 'vitest';
import { chooseDemoModel } from '../../src/cli/demoAgent.ts';

describe('the demo model', () => {
  it('is Anthropic when only ANTHROPIC_API_KEY is set', () => {
    const { model, real } = chooseDemoModel({ ANTHROPIC_API_KEY: 'sk-ant-demo-0123456789' });
    expect(real).toBe(true);
    expect(model.name).toBe('anthropic');
  });

  it('stays OpenAI-compatible when an OpenAI setting is set too', () => {
    const { model } = chooseDemoModel({ ANTHROPIC_API_KEY: 'sk-ant-demo-0123456789', OPENAI_API_KEY: 'sk-demo-0123456789' });
    expect(model.name).toBe('openai-compatible');
  });

  it('is the scripted model offline', () => {
    expect(chooseDemoModel({}).real).toBe(false);
  });
});
