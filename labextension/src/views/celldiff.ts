/**
 * A change shown inside its cell as a line diff: pending (Accept / Reject,
 * answering an `edit_cell` approval) or applied (Dismiss). Text goes in with
 * textContent only.
 */
import { DiffLine, diffStats, lineDiff } from '../linediff';
import { button, h } from './dom';

const MARK = { same: ' ', del: '-', add: '+' } as const;

export type DiffMode =
  | { kind: 'pending'; accept: () => void; reject: () => void }
  | { kind: 'applied'; dismiss: () => void };

export class CellDiff {
  readonly node: HTMLElement;

  constructor(cellId: string, before: string, after: string, mode: DiffMode) {
    const lines = lineDiff(before, after);
    this.node = h('div', {
      className: `loom-CellDiff loom-mod-${mode.kind}`,
      loom: 'cell-diff',
      data: { cellId, state: mode.kind }
    });
    // Lumino leaves keys pressed in here to us (no notebook shortcuts).
    this.node.dataset.lmSuppressShortcuts = 'true';
    this.node.tabIndex = 0;
    this.node.append(Private.head(lines, mode), Private.body(lines), this._buttons(mode));
    this.node.addEventListener('keydown', event => this._onKey(event, mode));
  }

  /** Answered: the buttons stay visible but do nothing more. */
  settle(): void {
    this.node.querySelectorAll('button').forEach(node => (node.disabled = true));
  }

  focus(): void {
    this.node.focus({ preventScroll: true });
  }

  private _buttons(mode: DiffMode): HTMLElement {
    const row = h('div', { className: 'loom-CellDiff-buttons' });
    if (mode.kind === 'applied') {
      row.append(
        button('Dismiss', { loom: 'diff-dismiss', title: 'Hide this diff' }, mode.dismiss)
      );
      return row;
    }
    const once = (answer: () => void) => () => {
      this.settle();
      answer();
    };
    const accept = button(
      'Accept',
      { loom: 'diff-accept', title: 'Accept (Ctrl+Enter)' },
      once(mode.accept)
    );
    const reject = button(
      'Reject',
      { loom: 'diff-reject', title: 'Reject (Escape)' },
      once(mode.reject)
    );
    accept.classList.add('loom-mod-allow');
    reject.classList.add('loom-mod-deny');
    row.append(accept, reject);
    return row;
  }

  private _onKey(event: KeyboardEvent, mode: DiffMode): void {
    const accept = event.key === 'Enter' && (event.ctrlKey || event.metaKey);
    const reject = event.key === 'Escape';
    if (!accept && !reject) {
      return;
    }
    event.preventDefault();
    event.stopPropagation();
    const name = mode.kind === 'applied' ? 'diff-dismiss' : accept ? 'diff-accept' : 'diff-reject';
    const target = this.node.querySelector<HTMLButtonElement>(`[data-loom="${name}"]`);
    if (target !== null && !target.disabled) {
      target.click();
    }
  }
}

namespace Private {
  export function head(lines: DiffLine[], mode: DiffMode): HTMLElement {
    const { added, removed } = diffStats(lines);
    const what = mode.kind === 'pending' ? 'Loom proposes a change' : 'Loom changed this cell';
    return h('div', { className: 'loom-CellDiff-head', text: `${what} (+${added} −${removed})` });
  }

  export function body(lines: DiffLine[]): HTMLElement {
    const pre = h('pre', { className: 'loom-CellDiff-lines' });
    pre.append(
      ...lines.map(line =>
        h('div', {
          className: `loom-CellDiff-line loom-mod-${line.kind}`,
          text: `${MARK[line.kind]} ${line.text}`
        })
      )
    );
    return pre;
  }
}
