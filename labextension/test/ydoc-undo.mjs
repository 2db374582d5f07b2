// Applies notebook requests (src/notebookops.ts) to a real YNotebook from
// @jupyter/ydoc, as JupyterLab 4 builds it (document-wide undo off, the
// default), and checks that one notebook undo (what `notebook:undo-cell-action`
// calls: sharedModel.undo()) takes each change back. Run by undo.spec.ts:
// @jupyter/ydoc is an ES module, which jest (commonjs here) cannot load.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import ts from 'typescript';
import { YNotebook } from '@jupyter/ydoc';

const here = path.dirname(fileURLToPath(import.meta.url));
const out = fs.mkdtempSync(path.join(os.tmpdir(), 'loom-ops-'));
for (const name of ['notebookops', 'celltext']) {
  const source = fs.readFileSync(path.join(here, '..', 'src', `${name}.ts`), 'utf8');
  const js = ts.transpileModule(source, {
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 }
  }).outputText.replace(/from '\.\/(\w+)'/g, "from './$1.mjs'");
  fs.writeFileSync(path.join(out, `${name}.mjs`), js);
}
const ops = await import(pathToFileURL(path.join(out, 'notebookops.mjs')).href);
fs.rmSync(out, { recursive: true, force: true });
/** As document.ts does: a refusal is a result, not an error. */
const apply = (nb, request, active = null) => {
  try {
    return ops.applyChange(nb, request, active);
  } catch (error) {
    return { ok: false, code: error.code ?? 'failed', error: error.message, conflicts: [] };
  }
};

const change = fields => ({
  op: 'read', cell_id: null, after_cell_id: null, source: null, cell_type: 'code',
  base_source: null, show_diff: false, provenance: null, outputs: [], execution_count: null,
  steps: [], include_outputs: true, below_active: false, ...fields
});
const prov = { session: 's', turn: 3, tool_call: 't1', action: 'edited' };

function notebook() {
  const nb = YNotebook.create({ disableDocumentWideUndoRedo: true });
  nb.insertCells(0, [
    { id: 'a', cell_type: 'code', source: 'a = 1' },
    { id: 'b', cell_type: 'markdown', source: '# b' },
    { id: 'c', cell_type: 'code', source: 'c = 3' }
  ]);
  nb.undoManager.clear(); // the loaded notebook is not an undoable change
  // The person types in a cell (the cell's own undo, as the editor does).
  nb.cells[0].transact(() => nb.cells[0].setSource('a = 10'));
  return nb;
}

const snapshot = nb => JSON.stringify(nb.cells.map(c => [c.id, c.cell_type, c.getSource(), c.getMetadata('loom') ?? null]));
const results = {};
const cases = {
  insert: change({ op: 'insert', after_cell_id: 'a', source: 'new', provenance: { ...prov, action: 'inserted' } }),
  insertTop: change({ op: 'insert', after_cell_id: null, source: 'top', cell_type: 'markdown' }),
  edit: change({ op: 'edit', cell_id: 'c', source: 'c = 30\nprint(c)', base_source: 'c = 3', provenance: prov }),
  delete: change({ op: 'delete', cell_id: 'b', base_source: '# b' }),
  move: change({ op: 'move', cell_id: 'a', after_cell_id: 'c' }),
  moveTop: change({ op: 'move', cell_id: 'c', after_cell_id: null }),
  belowActive: change({ op: 'insert', below_active: true, after_cell_id: 'c', source: 'here' })
};
for (const [name, request] of Object.entries(cases)) {
  const nb = notebook();
  const before = snapshot(nb);
  const result = apply(nb, request, 'b');
  const after = snapshot(nb);
  const depth = nb.undoManager.undoStack.length;
  nb.undo();
  results[name] = {
    ok: result.ok, index: result.index, cell: result.cell, before: result.before,
    wasAfter: result.was_after,
    changed: after !== before, after: JSON.parse(after), undoSteps: depth,
    restored: snapshot(nb) === before
  };
}
{
  const nb = notebook();
  const before = snapshot(nb);
  const stale = apply(nb, change({ op: 'edit', cell_id: 'a', source: 'x', base_source: 'a = 1' }));
  results.stale = { ok: stale.ok, code: stale.code, unchanged: snapshot(nb) === before };
}
{
  const nb = notebook();
  const edited = apply(nb, cases.edit);
  const inserted = apply(nb, change({ op: 'insert', after_cell_id: 'c', source: 'z = 1', provenance: { ...prov, action: 'inserted' } }));
  apply(nb, change({ op: 'delete', cell_id: 'b' }));
  const steps = [
    { cell_id: 'b', action: 'deleted', before: '# b', after: null, cell_type: 'markdown', index: 1, after_cell_id: null },
    { cell_id: inserted.cell.id, action: 'inserted', before: null, after: 'z = 1', cell_type: 'code', index: null, after_cell_id: null },
    { cell_id: 'c', action: 'edited', before: 'c = 3', after: edited.cell.source, cell_type: 'code', index: null, after_cell_id: null }
  ];
  const turnLeft = snapshot(nb);
  const depth = nb.undoManager.undoStack.length;
  const reverted = apply(nb, change({ op: 'revert', steps }));
  const after = JSON.parse(snapshot(nb));
  const undoSteps = nb.undoManager.undoStack.length - depth;
  nb.undo();
  results.revert = { ok: reverted.ok, after, undoSteps, restored: snapshot(nb) === turnLeft };
  nb.redo();
  nb.cells[2].setSource('changed by hand');
  const refused = apply(nb, change({ op: 'revert', steps: [steps[2]] }));
  results.refusedRevert = { ok: refused.ok, code: refused.code, conflicts: refused.conflicts, source: nb.cells[2].getSource() };
}
{
  const nb = notebook();
  const outputs = [{ output_type: 'error', ename: 'NameError', evalue: "name 'q' is not defined", traceback: ['\u001b[31mNameError\u001b[0m'] }];
  const done = apply(nb, change({ op: 'outputs', cell_id: 'c', outputs, execution_count: 4 }));
  const read = apply(nb, change({ op: 'read' }));
  results.outputs = { ok: done.ok, cell: done.cell, read: read.cells };
}
console.log(JSON.stringify(results));
process.exit(0); // awareness keeps a timer running
