/**
 * The footer's model options: thinking on/off and the effort level. They show
 * what the kernel's `options` message says (never a guess of their own) and
 * change it with `set_options`; a control the current model does not take is
 * disabled, its tooltip says why.
 */
import { ModelOptions } from '../protocol';
import { h } from './dom';

export type Effort = ModelOptions['effort'];
export const EFFORTS: readonly Effort[] = ['default', 'low', 'medium', 'high', 'xhigh', 'max'];

export type OptionChange = { thinking?: ModelOptions['thinking']; effort?: Effort };

/** Whether each control can be used, and its tooltip, for `options`. */
export function optionControls(options: ModelOptions): {
  thinking: { enabled: boolean; title: string };
  effort: { enabled: boolean; title: string; levels: Set<string> };
} {
  const { model, thinking_supported, effort_levels } = options;
  return {
    thinking: {
      enabled: thinking_supported,
      title: thinking_supported
        ? 'Adaptive thinking (from the next turn); the thinking shows collapsed above the answer'
        : `${model} does not take adaptive thinking`
    },
    effort: {
      enabled: effort_levels.length > 0,
      title:
        effort_levels.length > 0
          ? 'Effort level (from the next turn); default sends none'
          : `${model} does not take an effort level`,
      levels: new Set(['default', ...effort_levels])
    }
  };
}

export class ModelControls {
  readonly node = h('div', { className: 'loom-Options', loom: 'options' });

  constructor(change: (change: OptionChange) => boolean) {
    this._change = change;
    this._thinking.type = 'checkbox';
    this._thinking.dataset.loom = 'thinking-toggle';
    this._thinking.className = 'loom-Options-thinking';
    this._thinking.addEventListener('change', () => {
      this._send({ thinking: this._thinking.checked ? 'adaptive' : 'off' });
    });
    this._effort.dataset.loom = 'effort';
    this._effort.className = 'loom-Options-effort';
    for (const level of EFFORTS) {
      const option = h('option', { text: level === 'default' ? 'effort: default' : level });
      option.value = level;
      this._effort.append(option);
    }
    this._effort.addEventListener('change', () => {
      this._send({ effort: this._effort.value as Effort });
    });
    const thinkingLabel = h(
      'label',
      { className: 'loom-Options-label' },
      this._thinking,
      'thinking'
    );
    this._thinkingLabel = thinkingLabel;
    this.node.append(thinkingLabel, this._effort);
    this.show(null);
  }

  /** Show the kernel's options (null: not known yet, nothing to change). */
  show(options: ModelOptions | null): void {
    this._options = options;
    this.node.hidden = options === null;
    if (options === null) {
      return;
    }
    const controls = optionControls(options);
    this._thinking.checked = options.thinking === 'adaptive';
    this._thinking.disabled = !controls.thinking.enabled;
    this._thinkingLabel.title = controls.thinking.title;
    this._thinkingLabel.dataset.disabled = String(!controls.thinking.enabled);
    this._effort.value = options.effort;
    this._effort.disabled = !controls.effort.enabled;
    this._effort.title = controls.effort.title;
    for (const option of Array.from(this._effort.options)) {
      option.disabled = !controls.effort.levels.has(option.value);
    }
    this.node.dataset.model = options.model;
  }

  /** Ask the kernel; if the message cannot go, show the kernel's options again. */
  private _send(change: OptionChange): void {
    if (!this._change(change)) {
      this.show(this._options);
    }
  }

  private readonly _change: (change: OptionChange) => boolean;
  private readonly _thinking = h('input');
  private readonly _thinkingLabel: HTMLLabelElement;
  private readonly _effort = h('select');
  private _options: ModelOptions | null = null;
}
