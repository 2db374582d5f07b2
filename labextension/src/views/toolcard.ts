/** A tool card: name, input (code as it streams), result, duration, error state; collapsible. */
import { inputCode, inputFields, partialCode } from '../protocol';
import { ToolEntry } from '../store';
import { formatDuration, h, inputText } from './dom';

/** The code or JSON a tool was (or is being) called with. */
export function toolInput(entry: Pick<ToolEntry, 'input' | 'partial'>): string {
  const code = inputCode(entry.input) ?? (entry.partial ? partialCode(entry.partial) : null);
  if (code !== null) {
    return code;
  }
  const empty = entry.input === null || typeof entry.input !== 'object';
  const hasKeys = !empty && Object.keys(entry.input as object).length > 0;
  return hasKeys || !entry.partial ? inputText(entry.input) : entry.partial;
}

/** The call id in a tool entry's key (`c:<id>`); its approval's request id is the same. */
export function callId(key: string): string {
  return key.startsWith('c:') ? key.slice(2) : key;
}

/**
 * One card per approval: a call's tool card and its approval card (`data-call`, the same
 * id) do not both show the code. While the question waits the tool card shows only its
 * head (`data-approval="pending"`); once answered the approval card shows only its outcome
 * (`data-paired`; style/base.css). Either card may come first (after a reload the tool card
 * comes after its approval), so each looks for the other when it is drawn.
 */
export function pairWithApproval(list: Element, callId: string): void {
  const find = (loom: string): HTMLElement | undefined =>
    Array.from(list.querySelectorAll<HTMLElement>(`[data-loom="${loom}"]`)).find(
      node => node.dataset.call === callId
    );
  const tool = find('tool-card');
  const approval = find('approval');
  if (tool === undefined || approval === undefined || approval.dataset.question === 'keep') {
    return;
  }
  tool.dataset.approval = approval.dataset.decision === 'pending' ? 'pending' : 'answered';
  approval.dataset.paired = 'true';
}

/** Pair `node`'s call once `node` is in the list (a new card is listed right after it is
 * built). */
export function pairWhenListed(node: HTMLElement, callId: string): void {
  const pair = (): void => {
    const list = node.parentElement;
    if (list !== null && list !== undefined) {
      pairWithApproval(list, callId);
    }
  };
  if (node.parentElement === null) {
    queueMicrotask(pair);
  } else {
    pair();
  }
}

export class ToolCard {
  readonly node: HTMLDetailsElement;

  constructor(entry: ToolEntry) {
    this.node = h('details', {
      className: 'loom-ToolCard',
      loom: 'tool-card',
      data: { tool: entry.name }
    });
    this.node.append(this._summary, this._body);
    this._summary.addEventListener('click', () => (this._touched = true));
    this.update(entry);
  }

  update(entry: ToolEntry): void {
    const state = Private.state(entry);
    this.node.dataset.state = state;
    this.node.dataset.tool = entry.name;
    const call = callId(entry.key);
    this.node.dataset.call = call;
    pairWhenListed(this.node, call);
    if (entry.outside) {
      this.node.dataset.outside = entry.outside; // an outside agent's call (DESIGN §14)
    }
    this._summary.replaceChildren(
      h('span', { className: 'loom-ToolCard-icon', text: Private.ICONS[state] }),
      ...Private.outside(entry),
      h('span', { className: 'loom-ToolCard-name', text: entry.name }),
      h('span', { className: 'loom-ToolCard-summary', text: entry.summary }),
      h('span', {
        className: 'loom-ToolCard-duration',
        loom: 'tool-duration',
        text: formatDuration(entry.durationMs)
      })
    );
    this._body.replaceChildren(...Private.body(entry));
    this._setOpen(!entry.done || entry.isError);
  }

  /** Open while running (and on error); once the person toggles it, theirs is the say. */
  private _setOpen(open: boolean): void {
    if (!this._touched) {
      this.node.open = open;
    }
  }

  private readonly _summary = h('summary', { className: 'loom-ToolCard-head' });
  private readonly _body = h('div', { className: 'loom-ToolCard-body' });
  private _touched = false;
}

namespace Private {
  /** "Claude Code ran": who made an outside agent's call, before the tool's name. */
  export function outside(entry: ToolEntry): HTMLElement[] {
    if (!entry.outside) {
      return [];
    }
    const verb = entry.done ? 'ran' : 'runs';
    return [
      h('span', {
        className: 'loom-ToolCard-outside',
        loom: 'outside-agent',
        text: `${entry.outside} ${verb}`
      })
    ];
  }

  export const ICONS = { streaming: '✎', running: '⋯', done: '✓', error: '✗' } as const;

  /** streaming: the model is still writing the input; running: the tool has started. */
  export function state(entry: ToolEntry): keyof typeof ICONS {
    if (entry.done) {
      return entry.isError ? 'error' : 'done';
    }
    return entry.streaming ? 'streaming' : 'running';
  }

  export function body(entry: ToolEntry): HTMLElement[] {
    const fields = inputFields(entry.input);
    const label = fields ? `Input · ${fields}` : 'Input';
    const parts = [
      h('div', { className: 'loom-ToolCard-label', text: label }),
      h('pre', { className: 'loom-ToolCard-input', loom: 'tool-input', text: toolInput(entry) })
    ];
    if (entry.done) {
      parts.push(
        h('div', { className: 'loom-ToolCard-label', text: entry.isError ? 'Error' : 'Result' }),
        h('pre', { className: 'loom-ToolCard-result', loom: 'tool-result', text: entry.result })
      );
    }
    return parts;
  }
}
