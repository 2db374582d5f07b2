/**
 * The state line (with the Load button) and the footer (tokens, cost, context
 * gauge, the approval mode in force, and the thinking / effort controls).
 */
import { ApprovalModeView, ModelOptions } from '../protocol';
import { Usage } from '../store';
import { button, costText, formatTokens, h } from './dom';
import { ModelControls, OptionChange } from './options';

/** The pinned values of `[data-loom="status"]`'s `data-state`. */
export type ShownState = 'idle' | 'thinking' | 'waiting-approval' | 'queued' | 'offline';

/** Where an approval mode came from, for the footer's tooltip (DESIGN §12). */
const SOURCE_WORDS: Record<ApprovalModeView['source'], string> = {
  default: "Loom's default",
  user: 'your ~/.config/loom/loom.yaml',
  env: 'the LOOM_APPROVAL environment variable',
  project: "this folder's loom.yaml (you trusted it)",
  magic: '%cowork approval in this kernel'
};

/**
 * The footer's words for the approval mode in force, and its tooltip. Under the
 * organisation's managed policy (DESIGN §16, protocol 1.4) the words say
 * `(managed)` where the policy decides the mode (`· managed` otherwise) and the
 * tooltip holds the policy's line and each setting it overrides, one a line:
 * plain text from the kernel, never markup. An older kernel sends none of it.
 */
export function approvalModeText(view: ApprovalModeView): {
  text: string;
  title: string;
  managed: boolean;
} {
  const change = 'Change it with %cowork approval MODE (ask, auto or read-only).';
  const policy = view.managed ?? '';
  if (policy === '') {
    return {
      text: `approval: ${view.mode} (${view.source})`,
      title: `Approval mode ${view.mode}, from ${SOURCE_WORDS[view.source]}. ${change}`,
      managed: false
    };
  }
  const byPolicy = view.by_policy === true;
  const from = byPolicy ? "your organisation's managed policy" : SOURCE_WORDS[view.source];
  return {
    text: byPolicy
      ? `approval: ${view.mode} (managed)`
      : `approval: ${view.mode} (${view.source}) · managed`,
    title: [
      `Approval mode ${view.mode}, from ${from}.`,
      policy,
      ...(view.overrides ?? []),
      `${change} The policy refuses a looser one.`
    ].join('\n'),
    managed: true
  };
}

export class StatusLine {
  readonly node = h('div', { className: 'loom-Status', loom: 'status' });

  constructor(load: () => void) {
    this._load = button('Load Loom in this kernel', { loom: 'load' }, load);
    this._load.classList.add('loom-mod-accent');
    this.node.append(h('span', { className: 'loom-Status-dot' }), this._text, this._load);
    this.show('offline', 'connecting…', false);
  }

  /** Show a state, its words, and whether the Load button is offered. */
  show(state: ShownState, text: string, offerLoad: boolean): void {
    this.node.dataset.state = state;
    this._text.textContent = text;
    this._load.hidden = !offerLoad;
    this._load.disabled = false;
  }

  private readonly _text = h('span', { className: 'loom-Status-text' });
  private readonly _load: HTMLButtonElement;
}

export class Footer {
  readonly node = h('div', { className: 'loom-Footer', loom: 'footer' });

  constructor(change: (change: OptionChange) => boolean) {
    this._controls = new ModelControls(change);
    this._gauge.append(this._fill);
    this._usage.append(this._tokens, this._cost, this._gauge);
    this.node.append(this._usage, this._approval, this._controls.node);
    this.show(null);
    this.showApproval(null);
  }

  /** The approval mode in force and its source (null: not known yet), with the
   * organisation's managed policy where one is in force (`data-managed`). */
  showApproval(view: ApprovalModeView | null): void {
    this._approval.hidden = view === null;
    if (view !== null) {
      const { text, title, managed } = approvalModeText(view);
      this._approval.dataset.mode = view.mode;
      this._approval.dataset.source = view.source;
      if (managed) {
        this._approval.dataset.managed = 'true';
      } else {
        delete this._approval.dataset.managed;
      }
      this._approval.textContent = text;
      this._approval.title = title;
    }
    this._showFooter();
  }

  /** The model options the kernel reported (the controls follow them). */
  showOptions(options: ModelOptions | null): void {
    this._controls.show(options);
    this._showFooter();
  }

  show(usage: Usage | null): void {
    this._usage.hidden = usage === null;
    this._showFooter();
    if (usage === null) {
      return;
    }
    const { inputTokens, outputTokens, costUsd, unpriced, contextTokens, contextBudget } = usage;
    this._tokens.textContent = `${formatTokens(inputTokens)} in · ${formatTokens(outputTokens)} out`;
    this._cost.textContent = costText(costUsd, unpriced);
    const share = contextBudget > 0 ? Math.min(1, contextTokens / contextBudget) : 0;
    this._fill.style.width = `${(share * 100).toFixed(1)}%`;
    this._gauge.dataset.level = share > 0.9 ? 'high' : share > 0.7 ? 'medium' : 'low';
    this._gauge.title = `Context window: ${formatTokens(contextTokens)} of ${formatTokens(contextBudget)} tokens (${Math.round(share * 100)}%)`;
  }

  private _showFooter(): void {
    this.node.hidden = this._usage.hidden && this._controls.node.hidden && this._approval.hidden;
  }

  private readonly _controls: ModelControls;
  private readonly _approval = h('span', {
    className: 'loom-Footer-approval',
    loom: 'approval-mode'
  });
  private readonly _usage = h('div', { className: 'loom-Footer-usage' });
  private readonly _tokens = h('span', { className: 'loom-Footer-tokens', loom: 'tokens' });
  private readonly _cost = h('span', { className: 'loom-Footer-cost', loom: 'cost' });
  private readonly _gauge = h('div', { className: 'loom-Gauge', loom: 'context-gauge' });
  private readonly _fill = h('div', { className: 'loom-Gauge-fill' });
}
