/**
 * What Loom adds inside a notebook cell, below its input: the provenance
 * marker ("Loom · turn 7"), the Fix button of a cell that raised, and diffs.
 */
import type { Cell } from '@jupyterlab/cells';

import { Provenance } from '../protocol';
import { button, h } from './dom';

export type MarkActions = {
  /** Show the turn that wrote the cell. */
  jump: (provenance: Provenance) => void;
  /** Ask Loom to fix the cell (its id). */
  fix: (cellId: string) => void;
};

/** The Loom area of a cell (made on first use, right after the input). */
export function extras(cell: Cell): HTMLElement {
  const found = cell.node.querySelector<HTMLElement>(':scope > .loom-CellExtras');
  if (found !== null) {
    return found;
  }
  const node = h('div', { className: 'loom-CellExtras' }, h('div', { className: 'loom-CellBar' }));
  const input = cell.node.querySelector(':scope > .jp-Cell-inputWrapper');
  if (input !== null) {
    input.after(node);
  } else {
    cell.node.append(node);
  }
  return node;
}

/** Show, update or remove the provenance marker and the Fix button of one cell. */
export function showMarks(
  cell: Cell,
  provenance: Provenance | null,
  error: string | null,
  actions: MarkActions
): void {
  const existing = cell.node.querySelector(':scope > .loom-CellExtras');
  if (existing === null && provenance === null && error === null) {
    return;
  }
  const bar = extras(cell).querySelector('.loom-CellBar') as HTMLElement;
  const key = JSON.stringify([provenance, error]);
  if (bar.dataset.shown === key) {
    return;
  }
  bar.dataset.shown = key;
  const parts: HTMLElement[] = [];
  if (provenance !== null) {
    parts.push(Private.marker(provenance, actions));
  }
  if (error !== null) {
    const fix = button(
      'Fix with Loom',
      { loom: 'fix-error', title: `Ask Loom to fix: ${error}` },
      () => actions.fix(cell.model.id)
    );
    fix.classList.add('loom-CellBar-fix');
    parts.push(fix);
  }
  bar.replaceChildren(...parts);
}

namespace Private {
  export function marker(provenance: Provenance, actions: MarkActions): HTMLElement {
    const node = button(
      `Loom · turn ${provenance.turn}`,
      {
        loom: 'cell-provenance',
        className: 'loom-CellBar-provenance',
        data: { turn: String(provenance.turn), action: provenance.action },
        title: `${provenance.action === 'inserted' ? 'Inserted' : 'Edited'} by Loom in turn ${provenance.turn}: show it in the Loom sidebar`
      },
      () => actions.jump(provenance)
    );
    return node;
  }
}
