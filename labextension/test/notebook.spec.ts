/**
 * The pure parts of notebook editing: the diff's line counts, outputs as text and the
 * reply budget, the Fix prompt, the revert conflict check, and the store
 * leaving notebook requests to the notebook.
 */
import {
  OUTPUT_LIMIT,
  REPLY_BUDGET,
  fitBudget,
  fixPrompt,
  jsonSize,
  lastError,
  outputsText,
  readProvenance,
  stripAnsi
} from '../src/celltext';
import { editProposal } from '../src/document';
import { changedChunks, diffStats, textOf } from '../src/linediff';
import { revertConflicts } from '../src/notebookops';
import { DocCell, KernelBody, KernelMessage, RevertStep } from '../src/protocol';
import { ChatStore, Entry, notebookTurns } from '../src/store';

const stats = (before: string, after: string) => diffStats(textOf(before), textOf(after));

describe('diffStats (the counts over @codemirror/merge chunks)', () => {
  it('counts the lines of each changed chunk on each side', () => {
    expect(stats('a\nb\nc', 'a\nB\nc')).toEqual({ added: 1, removed: 1 });
    expect(stats('a\nb', 'a\nb')).toEqual({ added: 0, removed: 0 });
    // CodeMirror chunks whole lines: adjacent changed lines go together
    expect(stats('a\nb\nc', 'a\nc\nd')).toEqual({ added: 2, removed: 2 });
    expect(changedChunks(textOf('x = 1\ny = 2'), textOf('import os\nx = 1\ny = 2'))).toHaveLength(
      1
    );
  });

  it('counts no lines for an empty source', () => {
    expect(stats('', 'a\nb')).toEqual({ added: 2, removed: 0 });
    expect(stats('a', '')).toEqual({ added: 0, removed: 1 });
    expect(stats('', '')).toEqual({ added: 0, removed: 0 });
  });

  it('stays fast on long cells', () => {
    const before = Array.from({ length: 3000 }, (_, i) => `line ${i}`).join('\n');
    const after = before.replace('line 1500', 'changed');
    const started = Date.now();
    expect(stats(before, after)).toEqual({ added: 1, removed: 1 });
    const different = Array.from({ length: 3000 }, (_, i) => `other ${i * 7}`).join('\n');
    expect(stats(before, different).removed).toBe(3000);
    expect(Date.now() - started).toBeLessThan(2000);
  });
});

const error = {
  output_type: 'error',
  ename: 'ZeroDivisionError',
  evalue: 'division by zero',
  traceback: [
    '\u001b[0;31m---------------------------------------------------------------------------\u001b[0m',
    ...Array.from({ length: 20 }, (_, i) => `\u001b[0;32mframe ${i}\u001b[0m`),
    '\u001b[0;31mZeroDivisionError\u001b[0m: division by zero'
  ]
};

describe('outputs as text', () => {
  it('reads streams, text/plain, names images and formats errors', () => {
    const text = outputsText([
      { output_type: 'stream', name: 'stdout', text: ['hello\n', 'world'] },
      { output_type: 'execute_result', data: { 'text/plain': '42' }, execution_count: 1 },
      {
        output_type: 'display_data',
        data: { 'image/png': 'iVBORw0KGgo'.repeat(1000), 'text/plain': '<Figure>' }
      },
      error
    ]);
    expect(text).toContain('hello\nworld');
    expect(text).toContain('42');
    expect(text).toContain('[image/png]\n<Figure>');
    expect(text).not.toContain('iVBOR');
    expect(text).toContain('ZeroDivisionError: division by zero');
    expect(text).not.toContain('\u001b');
  });

  it('trims one cell to the output limit, keeping head and tail', () => {
    const long = 'a'.repeat(5000) + 'END';
    const text = outputsText([{ output_type: 'stream', name: 'stdout', text: long }]);
    expect(text.length).toBeLessThanOrEqual(OUTPUT_LIMIT);
    expect(text.startsWith('aaa')).toBe(true);
    expect(text.endsWith('END')).toBe(true);
    expect(text).toContain('characters cut');
  });

  it('finds the last error and strips ANSI', () => {
    expect(lastError([{ output_type: 'stream', text: 'x' }])).toBeNull();
    const found = lastError([{ output_type: 'stream', text: 'x' }, error]);
    expect(found?.ename).toBe('ZeroDivisionError');
    expect(stripAnsi('\u001b[1;31mred\u001b[0m')).toBe('red');
  });

  it('reads provenance only when Loom wrote it', () => {
    expect(readProvenance(undefined)).toBeNull();
    expect(readProvenance({ foo: 1 })).toBeNull();
    const loom = { session: 's1', turn: 7, tool_call: 'tc', action: 'inserted' };
    expect(readProvenance(loom)).toEqual(loom);
  });
});

describe('the reply budget', () => {
  const cell = (id: string, source: string, outputs: string): DocCell => ({
    id,
    cell_type: 'code',
    source,
    execution_count: 1,
    outputs,
    error: null,
    provenance: null
  });

  it('leaves a small notebook alone', () => {
    const cells = [cell('a', 'x = 1', '1')];
    expect(fitBudget(cells)).toEqual(cells);
  });

  it('drops the largest outputs first, then cuts the largest sources', () => {
    const many = Array.from({ length: 400 }, (_, i) =>
      cell(`c${i}`, `x${i} = ${i}`, 'o'.repeat(2000))
    );
    const fitted = fitBudget(many);
    expect(jsonSize(fitted)).toBeLessThan(REPLY_BUDGET);
    expect(fitted.map(c => c.source)).toEqual(many.map(c => c.source));

    const huge = [cell('big', 's'.repeat(400_000), ''), cell('small', 'y = 2', 'out')];
    const cut = fitBudget(huge);
    expect(jsonSize(cut)).toBeLessThan(REPLY_BUDGET);
    expect(cut[1].source).toBe('y = 2');
    expect(cut[0].source).toContain('characters cut');
  });
});

describe('the Fix prompt', () => {
  it('is the pinned template with the last 15 traceback lines, ANSI stripped', () => {
    const found = lastError([error]);
    expect(found).not.toBeNull();
    const text = fixPrompt('abc-123', 'x = 1 / 0', found!);
    const tail = [
      ...Array.from({ length: 20 }, (_, i) => `frame ${i}`),
      'ZeroDivisionError: division by zero'
    ]
      .slice(-15)
      .join('\n');
    expect(text).toBe(
      'Fix cell abc-123. Its source:\n```python\nx = 1 / 0\n```\n' +
        'It raised ZeroDivisionError: division by zero\n' +
        `${tail}\n` +
        'Propose the fix with edit_cell on this cell.'
    );
  });
});

describe('revert conflicts', () => {
  const step = (
    cell_id: string,
    action: RevertStep['action'],
    after: string | null
  ): RevertStep => ({
    cell_id,
    action,
    before: 'old',
    after,
    cell_type: 'code',
    index: 0,
    after_cell_id: null
  });
  const cells = [
    { id: 'a', source: 'new a' },
    { id: 'b', source: 'touched' }
  ];

  it('passes when every changed cell still holds what the turn left', () => {
    expect(
      revertConflicts(cells, [step('a', 'edited', 'new a'), step('z', 'deleted', null)])
    ).toEqual([]);
  });

  it('names edited cells that changed since and cells that are gone', () => {
    const steps = [
      step('a', 'inserted', 'new a'),
      step('b', 'edited', 'new b'),
      step('c', 'edited', 'x')
    ];
    expect(revertConflicts(cells, steps)).toEqual(['b', 'c']);
    expect(revertConflicts(cells, [step('gone', 'moved', null)])).toEqual(['gone']);
  });
});

describe('the store and notebook messages', () => {
  const msg = (seq: number, body: KernelBody): KernelMessage => ({
    seq,
    kernel_session: 'k1',
    turn: null,
    ...body
  });
  const request = (id: string): KernelBody => ({
    type: 'notebook_request',
    request_id: id,
    change: {
      op: 'read',
      cell_id: null,
      after_cell_id: null,
      source: null,
      cell_type: 'code',
      base_source: null,
      show_diff: false,
      provenance: null,
      outputs: [],
      execution_count: null,
      steps: [],
      include_outputs: true,
      below_active: false
    }
  });

  it('ignores notebook requests: no entry, no seq advance, never seen as a replay', () => {
    const store = new ChatStore();
    const changes: string[] = [];
    store.changed.connect((_, change) => changes.push(change.kind));
    expect(store.apply(msg(5, { type: 'notice', level: 'info', message: 'hi' }))).toBe(true);
    store.lastSeq = 5;
    const before = store.entries.length;
    changes.length = 0;
    expect(store.apply(msg(5, request('r1')))).toBe(true);
    expect(store.apply(msg(5, request('r2')))).toBe(true);
    expect(store.entries.length).toBe(before);
    expect(store.lastSeq).toBe(5);
    expect(changes).toEqual([]);
  });

  it('marks the turns whose tool cards changed the notebook', () => {
    const user = (turn: number): Entry => ({ kind: 'user', key: `t${turn}`, turn, text: 'x' });
    const tool = (turn: number, name: string, isError = false): Entry => ({
      kind: 'tool',
      key: `c${turn}${name}`,
      turn,
      name,
      input: {},
      partial: '',
      summary: '',
      result: '',
      isError,
      durationMs: null,
      streaming: false,
      done: true
    });
    const entries = [
      user(1),
      tool(2, 'edit_cell'),
      user(3),
      tool(4, 'run_python'),
      user(5),
      tool(6, 'delete_cell', true),
      user(7),
      tool(8, 'insert_cell')
    ];
    expect([...notebookTurns(entries)]).toEqual([1, 7]);
  });

  it('reads edit_cell approvals as proposals', () => {
    expect(editProposal('edit_cell', { cell_id: 'a', source: 'x' })).toEqual({
      cellId: 'a',
      source: 'x'
    });
    expect(editProposal('run_python', { code: 'x' })).toBeNull();
    expect(editProposal('edit_cell', { cell_id: 1 })).toBeNull();
  });
});
