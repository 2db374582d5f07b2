/**
 * The notebook side of one chat: answers the kernel's `notebook_request`s on
 * the open notebook (one `notebook_reply` each), shows proposed and applied
 * edits as diffs in their cells, and marks cells Loom wrote and cells that
 * raised (provenance marker, Fix button).
 */
import type { Cell } from '@jupyterlab/cells';
import type { NotebookPanel } from '@jupyterlab/notebook';
import type { IDisposable } from '@lumino/disposable';

import { fixPrompt, lastError, readProvenance } from './celltext';
import { Refused, applyChange, failed, indexOf } from './notebookops';
import {
  CellChange,
  ChangeResult,
  Decision,
  NotebookReply,
  NotebookRequest,
  Provenance
} from './protocol';
import { CellDiff, cellLooks } from './views/celldiff';
import { extras, showMarks } from './views/cellmarks';

export type DocumentActions = {
  reply: (reply: NotebookReply) => void;
  decide: (requestId: string, decision: Decision) => void;
  /** Show the turn that wrote a cell in the sidebar. */
  jump: (provenance: Provenance) => void;
  /** Send a message (the Fix prompt) and show the sidebar. */
  fix: (text: string) => void;
};

/** An `edit_cell` approval's input, when it is one. */
export function editProposal(
  tool: string,
  input: unknown
): { cellId: string; source: string } | null {
  const fields = (input ?? {}) as { cell_id?: unknown; source?: unknown };
  if (
    tool !== 'edit_cell' ||
    typeof fields.cell_id !== 'string' ||
    typeof fields.source !== 'string'
  ) {
    return null;
  }
  return { cellId: fields.cell_id, source: fields.source };
}

/** How long after a notebook change the cell marks are redrawn. */
const REFRESH_MS = 60;

type Shown = { cellId: string; diff: CellDiff };
type Watched = {
  on(name: 'afterTransaction', f: () => void): void;
  off(name: 'afterTransaction', f: () => void): void;
};

export class NotebookDocument implements IDisposable {
  constructor(panel: NotebookPanel, actions: DocumentActions) {
    this._panel = panel;
    this._actions = actions;
    panel.content.modelChanged.connect(this._watch, this);
    panel.content.modelContentChanged.connect(this.refreshSoon, this);
    void panel.context.ready.then(() => this.refreshSoon());
    this._watch();
  }

  get isDisposed(): boolean {
    return this._disposed;
  }

  /** Apply one request and send its one reply. */
  handle(request: NotebookRequest): void {
    const result = this._apply(request.change);
    this._actions.reply({ type: 'notebook_reply', request_id: request.request_id, result });
    this.refreshSoon();
  }

  /** Show an `edit_cell` approval as a diff in its cell, answered with Accept / Reject. */
  propose(requestId: string, cellId: string, source: string): void {
    const cell = this._cell(cellId);
    if (cell === null || this._pending.has(requestId)) {
      return;
    }
    const answer = (decision: Decision) => () => this._actions.decide(requestId, decision);
    const diff = new CellDiff(
      cellId,
      cell.model.sharedModel.getSource(),
      source,
      { kind: 'pending', accept: answer('allow'), reject: answer('deny') },
      cellLooks(cell.editor)
    );
    this._pending.set(requestId, { cellId, diff });
    this._place(cellId, diff);
  }

  /** The approval was answered (here, on the card or elsewhere): the pending diff goes. */
  closeProposal(requestId: string): void {
    this._pending.get(requestId)?.diff.dispose();
    this._pending.delete(requestId);
  }

  /** Redraw the cell marks once the notebook settles. */
  refreshSoon(): void {
    if (this._timer === 0 && !this._disposed) {
      this._timer = window.setTimeout(() => {
        this._timer = 0;
        this._refresh();
      }, REFRESH_MS);
    }
  }

  dispose(): void {
    if (this._disposed) {
      return;
    }
    this._disposed = true;
    window.clearTimeout(this._timer);
    this._watched?.off('afterTransaction', this._onTransaction);
    this._pending.forEach(shown => shown.diff.dispose());
    this._applied.forEach(diff => diff.dispose());
  }

  private _apply(change: CellChange): ChangeResult {
    const model = this._panel.content.model;
    if (model === null) {
      return failed('failed', 'The notebook is not loaded in the page yet; nothing was changed.');
    }
    try {
      const active = this._panel.content.activeCell?.model.id ?? null;
      const result = applyChange(model.sharedModel, change, active);
      if (change.op === 'edit' && change.show_diff && result.ok) {
        this._showApplied(change.cell_id as string, result.before ?? '', change.source ?? '');
      }
      return result;
    } catch (error) {
      if (error instanceof Refused) {
        return failed(error.code, error.message);
      }
      const why = error instanceof Error ? error.message : String(error);
      return failed('failed', `The notebook change failed (${why}); nothing was changed.`);
    }
  }

  /** `auto` mode: the applied edit stays visible until dismissed. */
  private _showApplied(cellId: string, before: string, after: string): void {
    this._applied.get(cellId)?.dispose();
    const dismiss = (): void => {
      diff.dispose();
      if (this._applied.get(cellId) === diff) {
        this._applied.delete(cellId);
      }
    };
    const looks = cellLooks(this._cell(cellId)?.editor);
    const diff = new CellDiff(cellId, before, after, { kind: 'applied', dismiss }, looks);
    this._applied.set(cellId, diff);
    this._place(cellId, diff);
  }

  private _place(cellId: string, diff: CellDiff): void {
    const cell = this._cell(cellId);
    if (cell !== null && !extras(cell).contains(diff.node)) {
      extras(cell).append(diff.node);
    }
  }

  private _cell(id: string): Cell | null {
    const model = this._panel.content.model;
    const index = model === null ? -1 : indexOf(model.sharedModel, id);
    return index < 0 ? null : (this._panel.content.widgets[index] ?? null);
  }

  /** Marks on every cell; diffs follow their cell (a moved cell is a new widget) or go with it. */
  private _refresh(): void {
    if (this._disposed) {
      return;
    }
    for (const cell of this._panel.content.widgets) {
      const shared = cell.model.sharedModel;
      const error = cell.model.type === 'code' ? lastError(Private.outputs(cell)) : null;
      showMarks(
        cell,
        readProvenance(shared.getMetadata('loom')),
        error && `${error.ename}: ${error.evalue}`,
        {
          jump: provenance => this._actions.jump(provenance),
          fix: id => this._fix(id)
        }
      );
    }
    this._pending.forEach(({ cellId, diff }, requestId) =>
      this._cell(cellId) === null ? this.closeProposal(requestId) : this._place(cellId, diff)
    );
    this._applied.forEach((diff, cellId) => {
      if (this._cell(cellId) === null) {
        diff.dispose();
        this._applied.delete(cellId);
      } else {
        this._place(cellId, diff);
      }
    });
  }

  private _fix(cellId: string): void {
    const cell = this._cell(cellId);
    const error = cell === null ? null : lastError(Private.outputs(cell));
    if (cell !== null && error !== null) {
      this._actions.fix(fixPrompt(cellId, cell.model.sharedModel.getSource(), error));
    }
  }

  /** Every change to the notebook's document (sources, outputs, metadata) redraws the marks. */
  private _watch(): void {
    this._watched?.off('afterTransaction', this._onTransaction);
    const shared = this._panel.content.model?.sharedModel as { ydoc?: Watched } | undefined;
    this._watched = shared?.ydoc ?? null;
    this._watched?.on('afterTransaction', this._onTransaction);
    this.refreshSoon();
  }

  private readonly _onTransaction = (): void => this.refreshSoon();
  private readonly _panel: NotebookPanel;
  private readonly _actions: DocumentActions;
  private readonly _pending = new Map<string, Shown>();
  private readonly _applied = new Map<string, CellDiff>();
  private _watched: Watched | null = null;
  private _timer = 0;
  private _disposed = false;
}

namespace Private {
  export function outputs(cell: Cell): { [key: string]: unknown }[] {
    const shared = cell.model.sharedModel as { getOutputs?: () => unknown[] };
    return (shared.getOutputs?.() ?? []) as { [key: string]: unknown }[];
  }
}
