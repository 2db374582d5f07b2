/**
 * A change shown inside its cell: pending (Accept / Reject, answering an
 * `edit_cell` approval) or applied (Dismiss). The lines are CodeMirror's unified
 * merge view (`@codemirror/merge`) in a read-only editor: the new source with the
 * removed lines drawn above the lines that replace them, changed characters marked,
 * highlighted like the cell when its editor is known. CodeMirror puts text in as
 * text nodes; the heading and buttons use textContent.
 */
import { getChunks, unifiedMergeView } from '@codemirror/merge';
import { highlightingFor, language, syntaxHighlighting } from '@codemirror/language';
import { EditorState, Extension, Text } from '@codemirror/state';
import { EditorView } from '@codemirror/view';
import { DIFF_CONFIG, changedChunks, diffStats, textOf } from '../linediff';
import { button, h } from './dom';

export type DiffMode =
  | { kind: 'pending'; accept: () => void; reject: () => void }
  | { kind: 'applied'; dismiss: () => void };

export class CellDiff {
  readonly node: HTMLElement;

  /** `looks`: the cell's language and highlighting (see `cellLooks`), or none. */
  constructor(
    cellId: string,
    before: string,
    after: string,
    mode: DiffMode,
    looks: Extension = []
  ) {
    const a = textOf(before);
    const b = textOf(after);
    this._view = Private.view(a, b, looks);
    const chunks = getChunks(this._view.state)?.chunks ?? changedChunks(a, b);
    this.node = h('div', {
      className: `loom-CellDiff loom-mod-${mode.kind}`,
      loom: 'cell-diff',
      data: { cellId, state: mode.kind }
    });
    // Lumino leaves keys pressed in here to us (no notebook shortcuts).
    this.node.dataset.lmSuppressShortcuts = 'true';
    this.node.tabIndex = 0;
    const lines = h('div', { className: 'loom-CellDiff-lines' }, this._view.dom);
    this.node.append(Private.head(diffStats(a, b, chunks), mode), lines, this._buttons(mode));
    this.node.addEventListener('keydown', event => this._onKey(event, mode));
  }

  /** Answered: the buttons stay visible but do nothing more. */
  settle(): void {
    this.node.querySelectorAll('button').forEach(node => (node.disabled = true));
  }

  focus(): void {
    this.node.focus({ preventScroll: true });
  }

  /** Gone for good: off the page, and its editor's listeners with it. */
  dispose(): void {
    this.node.remove();
    if (!this._disposed) {
      this._disposed = true;
      this._view.destroy();
    }
  }

  private readonly _view: EditorView;
  private _disposed = false;

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

/**
 * The look of a cell's own editor for its diff: its language and the highlighting
 * its editor uses (JupyterLab's), read from the cell's CodeMirror state. None when
 * the cell has no CodeMirror editor on the page (a windowed notebook's far cells).
 */
export function cellLooks(editor: unknown): Extension {
  const view = (editor as { editor?: unknown } | null)?.editor;
  if (!(view instanceof EditorView)) {
    return [];
  }
  const state = view.state;
  const lang = state.facet(language);
  return [
    lang === null ? [] : lang.extension,
    syntaxHighlighting({ style: tags => highlightingFor(state, tags) })
  ];
}

namespace Private {
  /** The read-only unified merge view of `b` against `a`, with JupyterLab's colours. */
  export function view(a: Text, b: Text, looks: Extension): EditorView {
    return new EditorView({
      state: EditorState.create({
        doc: b,
        extensions: [
          EditorState.readOnly.of(true),
          EditorView.editable.of(false),
          unifiedMergeView({ original: a, mergeControls: false, diffConfig: DIFF_CONFIG }),
          THEME,
          looks
        ]
      })
    });
  }

  const REMOVED = 'rgba(248, 81, 73, 0.18)';
  const ADDED = 'rgba(46, 160, 67, 0.2)';

  /**
   * Over the merge view's base theme (whose light/dark rules weigh four classes, so
   * these name `.cm-editor` too): JupyterLab's code font and the sidebar's diff colours,
   * removed lines struck through, changed characters darker.
   */
  const THEME = EditorView.theme({
    '&': {
      maxHeight: '320px',
      backgroundColor: 'transparent',
      color: 'var(--jp-content-font-color1)',
      fontSize: 'var(--jp-code-font-size)'
    },
    '.cm-scroller': {
      overflow: 'auto',
      fontFamily: 'var(--jp-code-font-family)',
      lineHeight: 'var(--jp-code-line-height)'
    },
    '.cm-content': { padding: '0' },
    '.cm-line': { padding: '0 6px' },
    '&.cm-editor.cm-merge-b .cm-changedLine': { backgroundColor: ADDED },
    '&.cm-editor.cm-merge-b .cm-changedText': { background: 'rgba(46, 160, 67, 0.4)' },
    '&.cm-editor .cm-deletedChunk': { backgroundColor: REMOVED, padding: '0' },
    '&.cm-editor .cm-deletedChunk .cm-deletedLine': { padding: '0 6px' },
    '&.cm-editor .cm-deletedChunk .cm-deletedLine del': {
      textDecoration: 'line-through',
      textDecorationColor: 'rgba(248, 81, 73, 0.5)'
    },
    '&.cm-editor .cm-deletedChunk .cm-deletedText': { background: 'rgba(248, 81, 73, 0.4)' },
    '.cm-gutters': { backgroundColor: 'transparent', border: 'none' }
  });

  export function head(
    { added, removed }: { added: number; removed: number },
    mode: DiffMode
  ): HTMLElement {
    const what = mode.kind === 'pending' ? 'Loom proposes a change' : 'Loom changed this cell';
    return h('div', { className: 'loom-CellDiff-head', text: `${what} (+${added} −${removed})` });
  }
}
