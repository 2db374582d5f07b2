/// <reference types="node" />
/**
 * Notebook requests on a real YNotebook (@jupyter/ydoc, as JupyterLab 4 makes
 * it): each change is one notebook undo step and the undo restores the
 * notebook. The work runs in node through test/ydoc-undo.mjs (ES modules).
 */
import { execFileSync } from 'child_process';
import * as path from 'path';

type Case = {
  ok: boolean;
  index: number | null;
  before: string | null;
  changed: boolean;
  after: [string, string, string, unknown][];
  undoSteps: number;
  restored: boolean;
};

const results = JSON.parse(
  execFileSync(process.execPath, [path.join(__dirname, 'ydoc-undo.mjs')], {
    cwd: path.join(__dirname, '..'),
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
    timeout: 60_000
  })
) as Record<string, Case> & Record<string, any>;

const ids = (name: string): string[] => results[name].after.map(([id]: [string]) => id);

describe('notebook requests on a YNotebook', () => {
  it.each(['insert', 'insertTop', 'belowActive', 'edit', 'delete', 'move', 'moveTop'])(
    '%s is one undo step and the undo restores the notebook',
    name => {
      expect(results[name].ok).toBe(true);
      expect(results[name].changed).toBe(true);
      expect(results[name].undoSteps).toBe(1);
      expect(results[name].restored).toBe(true);
    }
  );

  it('puts cells where asked, with provenance', () => {
    expect(ids('insert')[1]).toBe(results.insert.cell.id);
    expect(results.insert.cell.provenance.action).toBe('inserted');
    expect(ids('insertTop')[0]).toBe(results.insertTop.cell.id);
    expect(ids('belowActive')[2]).toBe(results.belowActive.cell.id);
    expect(results.edit.before).toBe('c = 3');
    expect(results.edit.cell.provenance.turn).toBe(3);
    expect(results.delete.before).toBe('# b');
    expect(ids('delete')).toEqual(['a', 'c']);
    expect(ids('move')).toEqual(['b', 'c', 'a']);
    expect(ids('moveTop')).toEqual(['c', 'a', 'b']);
    expect(results.move.wasAfter).toBe(''); // a was first: a revert puts it back on top
    expect(results.moveTop.wasAfter).toBe('b');
    expect(results.edit.wasAfter).toBeNull();
  });

  it('refuses an edit of a cell that changed since it was read', () => {
    expect(results.stale).toEqual({ ok: false, code: 'changed', unchanged: true });
  });

  it('reverts a turn in one undoable step, or not at all', () => {
    expect(results.revert.ok).toBe(true);
    expect(results.revert.after.map((cell: unknown[]) => cell.slice(0, 3))).toEqual([
      ['a', 'code', 'a = 10'],
      ['b', 'markdown', '# b'],
      ['c', 'code', 'c = 3']
    ]);
    expect(results.revert.undoSteps).toBe(1);
    expect(results.revert.restored).toBe(true);
    expect(results.refusedRevert).toEqual({
      ok: false,
      code: 'conflict',
      conflicts: ['c'],
      source: 'changed by hand'
    });
  });

  it('puts outputs in a code cell and reads them back as text', () => {
    expect(results.outputs.cell.execution_count).toBe(4);
    expect(results.outputs.cell.error).toBe("NameError: name 'q' is not defined");
    expect(results.outputs.read.map((cell: { id: string }) => cell.id)).toEqual(['a', 'b', 'c']);
  });
});
