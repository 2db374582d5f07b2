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
    conflicts: []
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

/** The cell ids of a revert that no longer hold what the turn left. */
export function revertConflicts(
  cells: readonly { id: string; source: string }[],
  steps: readonly RevertStep[]
): string[] {
  const sources = new Map(cells.map(cell => [cell.id, cell.source]));
  return steps
    .filter(step => {
      const now = sources.get(step.cell_id);
      if (step.action === 'inserted' || step.action === 'edited') {
        return now === undefined || now !== step.after;
      }
      return step.action === 'moved' && now === undefined;
    })
    .map(step => step.cell_id);
}

/** Apply one request to the notebook; throws `Refused` (nothing changed) or any error. */
export function applyChange(notebook: ISharedNotebook, change: CellChange): ChangeResult {
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
  Private.inOneStep(notebook, change.op !== 'outputs', () => op(notebook, change, result));
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
  type Op = (notebook: ISharedNotebook, change: CellChange, result: ChangeResult) => void;

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
    if (needsCell && index < 0) {
      throw new Refused(
        'missing',
        `There is no cell with id ${JSON.stringify(change.cell_id)} in the notebook.`
      );
    }
    const anchored = change.op === 'insert' || change.op === 'move';
    if (anchored && change.after_cell_id !== null && indexOf(notebook, change.after_cell_id) < 0) {
      throw new Refused(
        'missing',
        `There is no cell with id ${JSON.stringify(change.after_cell_id)} to put the cell after.`
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

  /** Where a cell lands when put after `afterId` (null: the top), once `moving` is out. */
  export function targetIndex(
    notebook: ISharedNotebook,
    afterId: string | null,
    moving = -1
  ): number {
    const after = indexOf(notebook, afterId);
    if (after < 0) {
      return 0;
    }
    return moving >= 0 && moving < after ? after : after + 1;
  }

  export function finish(notebook: ISharedNotebook, id: string, result: ChangeResult): void {
    const index = indexOf(notebook, id);
    result.index = index;
    result.cell = docCell(notebook.cells[index]);
  }

  const insert: Op = (notebook, change, result) => {
    const at = targetIndex(notebook, change.after_cell_id);
    const metadata = change.provenance === null ? {} : { loom: { ...change.provenance } };
    const cell = notebook.insertCell(at, {
      cell_type: change.cell_type,
      source: change.source ?? '',
      metadata
    });
    finish(notebook, cell.id, result);
  };

  const edit: Op = (notebook, change, result) => {
    const cell = notebook.cells[indexOf(notebook, change.cell_id)];
    result.before = cell.getSource();
    cell.setSource(change.source ?? '');
    if (change.provenance !== null) {
      cell.setMetadata('loom', { ...change.provenance });
    }
    finish(notebook, cell.id, result);
  };

  const remove: Op = (notebook, change, result) => {
    const index = indexOf(notebook, change.cell_id);
    result.before = notebook.cells[index].getSource();
    result.index = index;
    notebook.deleteCell(index);
  };

  const move: Op = (notebook, change, result) => {
    const from = indexOf(notebook, change.cell_id);
    const to = targetIndex(notebook, change.after_cell_id, from);
    if (to !== from) {
      notebook.moveCell(from, to);
    }
    finish(notebook, change.cell_id as string, result);
  };

  const outputs: Op = (notebook, change, result) => {
    const cell = notebook.cells[indexOf(notebook, change.cell_id)] as ISharedCodeCell;
    cell.setOutputs(change.outputs as unknown as Parameters<ISharedCodeCell['setOutputs']>[0]);
    cell.execution_count = change.execution_count;
    finish(notebook, cell.id, result);
  };

  const revert: Op = (notebook, change) => {
    change.steps.forEach(step => STEPS[step.action](notebook, step));
  };

  const STEPS: Record<RevertStep['action'], (notebook: ISharedNotebook, step: RevertStep) => void> =
    {
      inserted: (notebook, step) => notebook.deleteCell(indexOf(notebook, step.cell_id)),
      edited: (notebook, step) => {
        const cell = notebook.cells[indexOf(notebook, step.cell_id)];
        cell.setSource(step.before ?? '');
        cell.deleteMetadata('loom');
      },
      deleted: (notebook, step) => {
        const taken = indexOf(notebook, step.cell_id) >= 0;
        const at = Math.min(Math.max(step.index ?? 0, 0), notebook.cells.length);
        notebook.insertCell(at, {
          cell_type: step.cell_type,
          source: step.before ?? '',
          ...(taken ? {} : { id: step.cell_id })
        });
      },
      moved: (notebook, step) => {
        const from = indexOf(notebook, step.cell_id);
        const anchor = step.after_cell_id === null || indexOf(notebook, step.after_cell_id) >= 0;
        const to = anchor ? targetIndex(notebook, step.after_cell_id, from) : from;
        if (to !== from) {
          notebook.moveCell(from, to);
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
