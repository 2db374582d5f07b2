/** The footer's thinking / effort controls: what each allows, for the kernel's options. */
import { ModelOptions } from '../src/protocol';
import { optionControls } from '../src/views/options';

const base: ModelOptions = {
  model: 'claude-sonnet-5-5',
  thinking: 'adaptive',
  effort: 'high',
  thinking_supported: true,
  effort_levels: ['low', 'medium', 'high']
};

describe('optionControls', () => {
  it('enables what the model takes, and only its effort levels', () => {
    const controls = optionControls(base);
    expect(controls.thinking.enabled).toBe(true);
    expect(controls.effort.enabled).toBe(true);
    expect([...controls.effort.levels]).toEqual(['default', 'low', 'medium', 'high']);
  });

  it('disables, with a tooltip naming the model, what it does not take', () => {
    const controls = optionControls({
      ...base,
      model: 'fake-model',
      thinking_supported: false,
      effort_levels: []
    });
    expect(controls.thinking).toEqual({
      enabled: false,
      title: 'fake-model does not take adaptive thinking'
    });
    expect(controls.effort.enabled).toBe(false);
    expect(controls.effort.title).toBe('fake-model does not take an effort level');
  });
});
