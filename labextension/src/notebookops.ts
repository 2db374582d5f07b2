/**
 * The kernel's notebook requests applied to the live notebook model (a
 * YNotebook): read, insert, edit, delete, move, outputs and revert. Every
 * change runs in one transaction of the notebook, so one notebook undo
 * (`notebook:undo-cell-action`, `Z` in command mode) takes it back; a change
 * that cannot be made exactly is not made at all.
 */
import type { ISharedCell, ISharedCodeCell, ISharedNotebook } from '@jupyter/ydoc';

import { fitBudget, lastError, outputsText, readProvenance } from './celltext';
import type { CellChange, ChangeResult, DocCell, RevertStep } from './protocol';

type Output = { [key: string]: unknown };
type CellType = DocCell['cell_type'];

/** A refusal: the reply's code and the sentence the model is shown. */
export class Refused extends Error {
  constructor(
    readonly code: ChangeResult['code'],
    message: string
  ) {
    super(message);
  }
}

/** An empty successful result, to fill in. */
export function okResult(): ChangeResult {
  return {
    ok: true,
    error: '',
    code: '',
    cells: [],
    cell: null,
    index: null,
    before: null,
    conflicts: [],
    was_after: null
  };
}

/** A result that changed nothing. */
export function failed(code: ChangeResult['code'], error: string): ChangeResult {
  return { ...okResult(), ok: false, code, error };
}

function cellType(cell: ISharedCell): CellType {
  return cell.cell_type === 'markdown' || cell.cell_type === 'raw' ? cell.cell_type : 'code';
}

function outputsOf(cell: ISharedCell): Output[] {
  return cell.cell_type === 'code' ? ((cell as ISharedCodeCell).getOutputs() as Output[]) : [];
}

/** One cell as the agent reads it. */
export function docCell(cell: ISharedCell, withOutputs = true): DocCell {
  const outputs = outputsOf(cell);
  const error = lastError(outputs);
  const code = cell.cell_type === 'code' ? (cell as ISharedCodeCell) : null;
  return {
    id: cell.id,
    cell_type: cellType(cell),
    source: cell.getSource(),
    execution_count: code?.execution_count ?? null,
    outputs: withOutputs ? outputsText(outputs) : '',
    error: error === null ? null : `${error.ename}: ${error.evalue}`,
    provenance: readProvenance(cell.getMetadata('loom'))
  };
}

/**
 * The cell ids of a revert that no longer hold what the turn left, checked
 * step by step as the revert would go (a cell the turn inserted, then edited,
 * is checked against its edit first).
 */
export function revertConflicts(
  cells: readonly { id: string; source: string }[],
  steps: readonly RevertStep[]
): string[] {
  const sources = new Map(cells.map(cell => [cell.id, cell.source]));
  const conflicts: string[] = [];
  for (const step of steps) {
    const now = sources.get(step.cell_id);
    const written = step.action === 'inserted' || step.action === 'edited';
    if ((written && now !== step.after) || (step.action === 'moved' && now === undefined)) {
      conflicts.push(step.cell_id);
    }
    if (step.action === 'inserted') {
      sources.delete(step.cell_id);
    } else if (step.action === 'edited' || step.action === 'deleted') {
      sources.set(step.cell_id, step.before ?? '');
    }
  }
  return [...new Set(conflicts)];
}

/**
 * Apply one request to the notebook; throws `Refused` (nothing changed) or any
 * error. `activeCellId`: the person's active cell (`below_active` inserts).
 */
export function applyChange(
  notebook: ISharedNotebook,
  change: CellChange,
  activeCellId: string | null = null
): ChangeResult {
  if (change.op === 'read') {
    const cells = notebook.cells.map(cell => docCell(cell, change.include_outputs));
    return { ...okResult(), cells: fitBudget(cells) };
  }
  const result = okResult();
  const conflicts =
    change.op === 'revert' ? revertConflicts(plainCells(notebook), change.steps) : [];
  if (conflicts.length > 0) {
    return { ...failed('conflict', Private.conflictText(conflicts)), conflicts };
  }
  Private.check(notebook, change);
  const op = Private.OPS[change.op];
  const live = new Private.Live(notebook, activeCellId);
  let shown: string | null = null;
  Private.inOneStep(notebook, change.op !== 'outputs', () => {
    shown = op(live, change, result);
  });
  if (shown !== null) {
    const index = indexOf(notebook, shown);
    result.index = index;
    result.cell = index < 0 ? null : docCell(notebook.cells[index]);
  }
  return result;
}

function plainCells(notebook: ISharedNotebook): { id: string; source: string }[] {
  return notebook.cells.map(cell => ({ id: cell.id, source: cell.getSource() }));
}

/** The index of a cell by id, or -1. */
export function indexOf(notebook: ISharedNotebook, id: string | null): number {
  return id === null ? -1 : notebook.cells.findIndex(cell => cell.id === id);
}

namespace Private {
  /**
   * The notebook during one transaction. `notebook.cells` is refreshed only
   * when the transaction ends, so positions are tracked here, and a move is a
   * delete and an insert of the cell's JSON (what YNotebook.moveCell does).
   */
  export class Live {
    constructor(
      readonly notebook: ISharedNotebook,
      readonly activeCellId: string | null
    ) {
      this._ids = notebook.cells.map(cell => cell.id);
      this._cells = new Map(notebook.cells.map(cell => [cell.id, cell]));
    }

    get length(): number {
      return this._ids.length;
    }

    index(id: string | null): number {
      return id === null ? -1 : this._ids.indexOf(id);
    }

    cell(id: string | null): ISharedCell {
      const cell = id === null ? undefined : this._cells.get(id);
      if (cell === undefined) {
        throw new Error(`cell ${id} is not in the notebook`);
      }
      return cell;
    }

    insert(at: number, json: Parameters<ISharedNotebook['insertCell']>[1]): ISharedCell {
      const cell = this.notebook.insertCell(at, json);
      this._ids.splice(at, 0, cell.id);
      this._cells.set(cell.id, cell);
      return cell;
    }

    delete(id: string): void {
      const at = this.index(id);
      if (at < 0) {
        throw new Error(`cell ${id} is not in the notebook`);
      }
      this.notebook.deleteCell(at);
      this._ids.splice(at, 1);
      this._cells.delete(id);
    }

    /** The id of the cell just above `id` ("" when it is first). */
    above(id: string): string {
      const at = this.index(id);
      return at > 0 ? this._ids[at - 1] : '';
    }

    /** Put a cell after `afterId` (null: at the top). */
    move(id: string, afterId: string | null): void {
      const from = this.index(id);
      const after = this.index(afterId);
      const to = after < 0 ? 0 : from < after ? after : after + 1;
      if (to !== from) {
        const json = this.cell(id).toJSON();
        this.delete(id);
        this.insert(to, json as Parameters<ISharedNotebook['insertCell']>[1]);
      }
    }

    private readonly _ids: string[];
    private readonly _cells: Map<string, ISharedCell>;
  }

  /** Apply a change; returns the id of the cell the reply shows, if any. */
  type Op = (live: Live, change: CellChange, result: ChangeResult) => string | null;

  export function conflictText(ids: string[]): string {
    return `Nothing was reverted: these cells changed since the turn (or are gone): ${ids.join(', ')}.`;
  }

  type Undo = { stopCapturing(): void; undo(): unknown; undoStack: unknown[] };

  /**
   * One undo step: the capture window is closed before and after, so the change
   * merges neither with the person's last edit nor with the next one. A change
   * that throws half way is undone before the error goes on.
   */
  export function inOneStep(notebook: ISharedNotebook, undoable: boolean, apply: () => void): void {
    const undo = (notebook as { undoManager?: Undo }).undoManager;
    undo?.stopCapturing();
    const depth = undo?.undoStack.length ?? 0;
    let failure: { error: unknown } | null = null;
    notebook.transact(() => {
      try {
        apply();
      } catch (error) {
        failure = { error };
      }
    }, undoable);
    undo?.stopCapturing();
    if (failure !== null) {
      if (undoable && undo !== undefined && undo.undoStack.length > depth) {
        undo.undo();
      }
      throw (failure as { error: unknown }).error;
    }
  }

  /** Everything that refuses a request is checked before anything changes. */
  export function check(notebook: ISharedNotebook, change: CellChange): void {
    const needsCell = ['edit', 'delete', 'move', 'outputs'].includes(change.op);
    const index = indexOf(notebook, change.cell_id);
    const quoted = (id: string | null): string => JSON.stringify(id);
    if (needsCell && index < 0) {
      throw new Refused(
        'missing',
        `There is no cell with id ${quoted(change.cell_id)} in the notebook.`
      );
    }
    const anchored = (change.op === 'insert' && !change.below_active) || change.op === 'move';
    if (anchored && change.after_cell_id !== null && indexOf(notebook, change.after_cell_id) < 0) {
      throw new Refused(
        'missing',
        `There is no cell with id ${quoted(change.after_cell_id)} to put the cell after.`
      );
    }
    const base = change.base_source;
    const guarded = change.op === 'edit' || change.op === 'delete';
    if (guarded && base !== null && notebook.cells[index].getSource() !== base) {
      throw new Refused(
        'changed',
        `Cell ${change.cell_id} changed since you read it; nothing was changed. Read the notebook again.`
      );
    }
    if (change.op === 'outputs' && notebook.cells[index].cell_type !== 'code') {
      throw new Refused('failed', `Cell ${change.cell_id} is not a code cell: it has no outputs.`);
    }
    if ((change.op === 'insert' || change.op === 'edit') && change.source === null) {
      throw new Refused('failed', `The ${change.op} request carries no source.`);
    }
  }

  /** Below the active cell (at the end without one), or after `after_cell_id`. */
  const insert: Op = (live, change) => {
    const active = live.index(live.activeCellId);
    const below = active < 0 ? live.length - 1 : active;
    const after = change.below_active ? below : live.index(change.after_cell_id);
    const metadata = change.provenance === null ? {} : { loom: { ...change.provenance } };
    const cell = live.insert(after + 1, {
      cell_type: change.cell_type,
      source: change.source ?? '',
      metadata
    });
    return cell.id;
  };

  const edit: Op = (live, change, result) => {
    const cell = live.cell(change.cell_id);
    result.before = cell.getSource();
    cell.setSource(change.source ?? '');
    if (change.provenance !== null) {
      cell.setMetadata('loom', { ...change.provenance });
    }
    return cell.id;
  };

  const remove: Op = (live, change, result) => {
    const id = change.cell_id as string;
    result.before = live.cell(id).getSource();
    result.index = live.index(id);
    live.delete(id);
    return null;
  };

  const move: Op = (live, change, result) => {
    result.was_after = live.above(change.cell_id as string); // where a revert puts it back
    live.move(change.cell_id as string, change.after_cell_id);
    return change.cell_id;
  };

  const outputs: Op = (live, change) => {
    const cell = live.cell(change.cell_id) as ISharedCodeCell;
    cell.setOutputs(change.outputs as unknown as Parameters<ISharedCodeCell['setOutputs']>[0]);
    cell.execution_count = change.execution_count;
    return cell.id;
  };

  const revert: Op = (live, change) => {
    change.steps.forEach(step => STEPS[step.action](live, step));
    return null;
  };

  const STEPS: Record<RevertStep['action'], (live: Live, step: RevertStep) => void> = {
    inserted: (live, step) => live.delete(step.cell_id),
    edited: (live, step) => {
      const cell = live.cell(step.cell_id);
      cell.setSource(step.before ?? '');
      cell.deleteMetadata('loom');
    },
    deleted: (live, step) => {
      const taken = live.index(step.cell_id) >= 0;
      const at = Math.min(Math.max(step.index ?? 0, 0), live.length);
      live.insert(at, {
        cell_type: step.cell_type,
        source: step.before ?? '',
        ...(taken ? {} : { id: step.cell_id })
      });
    },
    moved: (live, step) => {
      const anchored = step.after_cell_id === null || live.index(step.after_cell_id) >= 0;
      if (anchored) {
        live.move(step.cell_id, step.after_cell_id);
      }
    }
  };

  export const OPS: Record<Exclude<CellChange['op'], 'read'>, Op> = {
    insert,
    edit,
    delete: remove,
    move,
    outputs,
    revert
  };
}
