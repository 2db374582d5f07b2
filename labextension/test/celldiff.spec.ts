/**
 * @jest-environment jsdom
 */
/**
 * The proposed change in its cell: CodeMirror's unified merge view (@codemirror/merge)
 * drawn in jsdom — kept, removed and added lines as the page shows them, the heading's
 * counts, text never read as markup, the pinned names and the keys.
 */
import { python } from '@codemirror/lang-python';
import { HighlightStyle, syntaxHighlighting } from '@codemirror/language';
import { EditorState } from '@codemirror/state';
import { EditorView } from '@codemirror/view';
import { tags } from '@lezer/highlight';
import { CellDiff, DiffMode, cellLooks } from '../src/views/celldiff';

const shown: CellDiff[] = [];
afterEach(() => shown.splice(0).forEach(diff => diff.dispose()));

function render(before: string, after: string, mode?: DiffMode, editor?: unknown): CellDiff {
  const answer = mode ?? { kind: 'pending', accept: jest.fn(), reject: jest.fn() };
  const diff = new CellDiff('cell-1', before, after, answer, cellLooks(editor));
  document.body.append(diff.node);
  shown.push(diff);
  return diff;
}

/** The rows on screen: ' ' kept, '-' removed (drawn above), '+' added or changed. */
function rows(diff: CellDiff): string[] {
  const content = diff.node.querySelector('.cm-content') as HTMLElement;
  return Array.from(content.children).flatMap(node => {
    if (node.classList.contains('cm-deletedChunk')) {
      return Array.from(node.querySelectorAll('.cm-deletedLine')).map(
        line => `-${line.textContent}`
      );
    }
    return [`${node.classList.contains('cm-changedLine') ? '+' : ' '}${node.textContent}`];
  });
}

const head = (diff: CellDiff): string =>
  diff.node.querySelector('.loom-CellDiff-head')?.textContent ?? '';

describe('the merge view in the cell', () => {
  it('keeps common lines and shows removed before added', () => {
    const diff = render('a\nb\nc', 'a\nB\nc');
    expect(rows(diff)).toEqual([' a', '-b', '+B', ' c']);
    expect(head(diff)).toBe('Loom proposes a change (+1 −1)');
    // the changed characters are marked inside their lines
    expect(diff.node.querySelector('.cm-changedLine .cm-changedText')?.textContent).toBe('B');
    expect(diff.node.querySelector('.cm-deletedLine .cm-deletedText')?.textContent).toBe('b');
  });

  it('groups changes into chunks of whole lines as CodeMirror does', () => {
    const diff = render('x = 1\ny = 2\nprint(x)', 'import os\nx = 1\nprint(x)\nprint(y)');
    expect(rows(diff)).toEqual([
      '+import os',
      ' x = 1',
      '-y = 2',
      '-print(x)',
      '+print(x)',
      '+print(y)'
    ]);
    expect(head(diff)).toBe('Loom proposes a change (+3 −2)');
  });

  it('handles empty sides and identical texts', () => {
    // an empty source is one empty line to CodeMirror; the heading counts no lines for it
    const filled = render('', 'a\nb');
    expect(rows(filled)).toEqual(['-', '+a', '+b']);
    expect(head(filled)).toBe('Loom proposes a change (+2 −0)');
    const emptied = render('a', '');
    expect(rows(emptied)).toEqual(['-a', ' ']);
    expect(head(emptied)).toBe('Loom proposes a change (+0 −1)');
    const same = render('a\nb', 'a\nb', { kind: 'applied', dismiss: jest.fn() });
    expect(rows(same)).toEqual([' a', ' b']);
    expect(head(same)).toBe('Loom changed this cell (+0 −0)');
  });

  it('puts source text in as text, never as markup', () => {
    const diff = render('<b>old</b>', '<img src=x onerror="alert(1)">\n<script>x()</script>');
    expect(diff.node.querySelector('img, script, b')).toBeNull();
    expect(rows(diff)).toEqual([
      '-<b>old</b>',
      '+<img src=x onerror="alert(1)">',
      '+<script>x()</script>'
    ]);
  });

  it('is read-only and has no merge buttons of its own', () => {
    const diff = render('a', 'b');
    expect(diff.node.querySelector('.cm-content')?.getAttribute('contenteditable')).toBe('false');
    expect(diff.node.querySelector('.cm-chunkButtons')).toBeNull();
    expect(diff.node.querySelectorAll('button')).toHaveLength(2);
  });

  it('highlights like the cell when its CodeMirror editor is given', () => {
    const style = HighlightStyle.define([{ tag: tags.keyword, class: 'kw' }]);
    const cell = new EditorView({
      state: EditorState.create({ doc: '', extensions: [python(), syntaxHighlighting(style)] })
    });
    const diff = render('import os', 'import sys', undefined, { editor: cell });
    expect(diff.node.querySelector('.cm-line .kw')?.textContent).toBe('import');
    expect(diff.node.querySelector('.cm-deletedLine .kw')?.textContent).toBe('import');
    const plain = render('import os', 'import sys', undefined, { editor: {} });
    expect(plain.node.querySelector('.kw')).toBeNull();
    cell.destroy();
  });
});

describe('answering in the cell', () => {
  it('carries the pinned names and answers once', () => {
    const accept = jest.fn();
    const reject = jest.fn();
    const diff = render('y = 1', 'y = 10', { kind: 'pending', accept, reject });
    expect(diff.node.dataset.loom).toBe('cell-diff');
    expect(diff.node.dataset.cellId).toBe('cell-1');
    const button = (name: string) =>
      diff.node.querySelector(`[data-loom="${name}"]`) as HTMLButtonElement;
    button('diff-accept').click();
    button('diff-reject').click();
    expect(accept).toHaveBeenCalledTimes(1);
    expect(reject).not.toHaveBeenCalled();
    expect(button('diff-accept').disabled).toBe(true);
  });

  it('takes Ctrl+Enter and Escape, also from inside the editor', () => {
    const accept = jest.fn();
    const reject = jest.fn();
    const first = render('a', 'b', { kind: 'pending', accept, reject });
    const key = (target: Element, init: KeyboardEventInit) =>
      target.dispatchEvent(new KeyboardEvent('keydown', { bubbles: true, ...init }));
    key(first.node.querySelector('.cm-content') as Element, { key: 'Enter', ctrlKey: true });
    expect(accept).toHaveBeenCalledTimes(1);
    const second = render('a', 'b', { kind: 'pending', accept, reject });
    key(second.node, { key: 'Escape' });
    expect(reject).toHaveBeenCalledTimes(1);
  });

  it('dismisses an applied change, and dispose takes it off the page', () => {
    const dismiss = jest.fn();
    const diff = render('a', 'b', { kind: 'applied', dismiss });
    (diff.node.querySelector('[data-loom="diff-dismiss"]') as HTMLButtonElement).click();
    expect(dismiss).toHaveBeenCalledTimes(1);
    diff.dispose();
    diff.dispose();
    expect(diff.node.isConnected).toBe(false);
  });
});
