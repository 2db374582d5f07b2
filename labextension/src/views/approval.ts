/** An approval request: the tool input first, then allow / deny / always. A "keep" question
 * (a call changed files Loom protects; Loom undid it) shows the attempted change instead.
 * The code shows once: see `pairWithApproval` (views/toolcard.ts). */
import { Decision, inputFields } from '../protocol';
import { ApprovalEntry } from '../store';
import { button, h } from './dom';
import { pairWhenListed, toolInput } from './toolcard';

const LABELS: Record<Decision, string> = { allow: 'Allow', deny: 'Deny', always: 'Always' };
const DECISIONS = ['allow', 'deny', 'always'] as const;
const DONE: Record<Decision, string> = {
  allow: 'Allowed',
  deny: 'Denied',
  always: 'Always allowed'
};
const KEEP_LABELS = { allow: 'Keep this change', deny: 'Leave it undone' } as const;
const KEEP_DONE = { allow: 'Kept', deny: 'Left undone', always: 'Kept' } as const;

export class ApprovalCard {
  readonly node: HTMLElement;

  constructor(entry: ApprovalEntry, decide: (requestId: string, decision: Decision) => void) {
    this._decide = decide;
    this.node = h('div', { className: 'loom-Approval', loom: 'approval' });
    this.update(entry);
  }

  update(entry: ApprovalEntry): void {
    this.node.dataset.decision = entry.decision ?? 'pending';
    this.node.dataset.question = entry.question;
    if (entry.question === 'keep') {
      this.node.replaceChildren(...this._keep(entry));
      return;
    }
    this.node.dataset.call = entry.requestId;
    pairWhenListed(this.node, entry.requestId);
    const fields = inputFields(entry.input);
    const parts: HTMLElement[] = [
      h('div', { className: 'loom-Approval-title', text: `Allow ${entry.tool}?` }),
      ...(fields ? [h('div', { className: 'loom-Approval-fields', text: fields })] : []),
      h('pre', {
        className: 'loom-Approval-input',
        loom: 'approval-input',
        text: toolInput({ input: entry.input, partial: '' })
      })
    ];
    if (entry.preview !== '' && entry.preview !== toolInput({ input: entry.input, partial: '' })) {
      parts.push(h('div', { className: 'loom-Approval-preview', text: entry.preview }));
    }
    if (entry.always === null && entry.decision === null) {
      // A write to one of Loom's guard rails: asked every time, no Always.
      parts.push(
        h('div', { className: 'loom-Approval-rail', loom: 'guard-rail', text: entry.summary })
      );
    }
    parts.push(entry.decision === null ? this._buttons(entry) : Private.outcome(entry));
    this.node.replaceChildren(...parts);
  }

  /** The attempted change as a diff (plain text), then keep / leave undone. */
  private _keep(entry: ApprovalEntry): HTMLElement[] {
    const parts: HTMLElement[] = [
      h('div', { className: 'loom-Approval-title', text: entry.summary }),
      h('pre', { className: 'loom-Approval-input', loom: 'protected-diff', text: entry.preview })
    ];
    if (entry.decision !== null) {
      const by = entry.by !== null && entry.by !== 'sidebar' ? ` (${entry.by})` : '';
      parts.push(
        h('div', { className: 'loom-Approval-outcome', text: `${KEEP_DONE[entry.decision]}${by}` })
      );
      return parts;
    }
    const row = h('div', { className: 'loom-Approval-buttons' });
    for (const decision of ['allow', 'deny'] as const) {
      const node = button(KEEP_LABELS[decision], { loom: 'approve', data: { decision } }, () => {
        row.querySelectorAll('button').forEach(b => (b.disabled = true));
        this._decide(entry.requestId, decision);
      });
      node.classList.add(`loom-mod-${decision}`);
      row.append(node);
    }
    parts.push(row);
    return parts;
  }

  private _buttons(entry: ApprovalEntry): HTMLElement {
    const row = h('div', { className: 'loom-Approval-buttons' });
    const decisions = entry.always === null ? (['allow', 'deny'] as const) : DECISIONS;
    for (const decision of decisions) {
      const node = button(LABELS[decision], { loom: 'approve', data: { decision } }, () => {
        row.querySelectorAll('button').forEach(b => (b.disabled = true));
        this._decide(entry.requestId, decision);
      });
      node.classList.add(`loom-mod-${decision}`);
      if (decision === 'always' && entry.always) {
        node.title = `Always allow ${entry.always} in this conversation`;
        node.setAttribute('aria-label', node.title);
      }
      row.append(node);
    }
    if (entry.always) {
      row.append(h('span', { className: 'loom-Approval-scope', text: `Always: ${entry.always}` }));
    }
    return row;
  }

  private readonly _decide: (requestId: string, decision: Decision) => void;
}

namespace Private {
  export function outcome(entry: ApprovalEntry): HTMLElement {
    const decision = entry.decision ?? 'deny';
    const by = entry.by !== null && entry.by !== 'sidebar' ? ` (${entry.by})` : '';
    return h('div', { className: 'loom-Approval-outcome', text: `${DONE[decision]}${by}` });
  }
}
