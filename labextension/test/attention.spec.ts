/**
 * @jest-environment jsdom
 *
 * The waiting indicator (issue 40): while a card waits and the Loom panel is not on
 * screen, the notebook's toolbar shows a button (data-loom="attention") that opens the
 * panel, and the page title carries a mark while any card waits; both go once answered.
 */
import type { NotebookPanel } from '@jupyterlab/notebook';
import { Signal } from '@lumino/signaling';
import { Widget } from '@lumino/widgets';

import {
  AttentionIndicator,
  CAPTION_WAITING,
  TITLE_MARK,
  TOOLBAR_ITEM,
  markedTitle,
  showsButton
} from '../src/attention';

jest.mock('@lumino/dragdrop', () => {
  const events = globalThis as unknown as { DragEvent?: unknown };
  events.DragEvent ??= class DragEvent extends MouseEvent {}; // jsdom has none
  return jest.requireActual('@lumino/dragdrop');
});

class FakeSidebar {
  readonly waiting = new Set<unknown>();
  isVisible = false;
  isDisposed = false;
  readonly attentionChanged = new Signal<this, void>(this);
  readonly shownChanged = new Signal<this, boolean>(this);
  get attention(): boolean {
    return this.waiting.size > 0;
  }
  waitsIn(panel: NotebookPanel): boolean {
    return this.waiting.has(panel);
  }
  wait(panel: unknown, on: boolean): void {
    if (on) {
      this.waiting.add(panel);
    } else {
      this.waiting.delete(panel);
    }
    this.attentionChanged.emit();
  }
  show(shown: boolean): void {
    this.isVisible = shown;
    this.shownChanged.emit(shown);
  }
}

class FakePanel {
  isDisposed = false;
  readonly items: [string, Widget][] = [];
  readonly disposed = new Signal<this, void>(this);
  readonly toolbar = {
    addItem: (name: string, widget: Widget): boolean => {
      this.items.push([name, widget]);
      document.body.append(widget.node);
      return true;
    }
  };
  close(): void {
    this.isDisposed = true;
    this.disposed.emit();
  }
}

class FakeTracker {
  readonly panels: FakePanel[] = [];
  readonly widgetAdded = new Signal<this, NotebookPanel>(this);
  forEach(fn: (panel: NotebookPanel) => void): void {
    this.panels.forEach(panel => fn(panel as unknown as NotebookPanel));
  }
  add(): FakePanel {
    const panel = new FakePanel();
    this.panels.push(panel);
    this.widgetAdded.emit(panel as unknown as NotebookPanel);
    return panel;
  }
}

/** Let the title watch (a MutationObserver) run. */
const settle = (): Promise<void> => new Promise(resolve => setTimeout(resolve, 0));

function button(panel: FakePanel): HTMLButtonElement {
  const [name, widget] = panel.items[0];
  expect(name).toBe(TOOLBAR_ITEM);
  return widget.node.querySelector('[data-loom="attention"]') as HTMLButtonElement;
}

function shown(panel: FakePanel): boolean {
  return !panel.items[0][1].isHidden;
}

describe('markedTitle and showsButton', () => {
  it('puts the mark in front once and takes it away', () => {
    expect(markedTitle('a.ipynb', true)).toBe(`${TITLE_MARK}a.ipynb`);
    expect(markedTitle(`${TITLE_MARK}a.ipynb`, true)).toBe(`${TITLE_MARK}a.ipynb`);
    expect(markedTitle(`${TITLE_MARK}a.ipynb`, false)).toBe('a.ipynb');
    expect(markedTitle('a.ipynb', false)).toBe('a.ipynb');
  });

  it('shows the button only while a card waits and the panel is away', () => {
    expect(showsButton(true, false)).toBe(true);
    expect(showsButton(true, true)).toBe(false);
    expect(showsButton(false, false)).toBe(false);
    expect(showsButton(false, true)).toBe(false);
  });
});

describe('AttentionIndicator', () => {
  let sidebar: FakeSidebar;
  let tracker: FakeTracker;
  let opened: number;
  let indicator: AttentionIndicator;

  beforeEach(() => {
    document.head.replaceChildren(document.createElement('title'));
    document.body.replaceChildren();
    document.title = 'nb.ipynb';
    sidebar = new FakeSidebar();
    tracker = new FakeTracker();
    opened = 0;
    tracker.add(); // open before the indicator starts
    indicator = new AttentionIndicator({
      sidebar: sidebar as never,
      notebooks: tracker as never,
      open: () => (opened += 1)
    });
  });

  afterEach(() => indicator.dispose());

  it('adds a hidden, accessible button to each notebook toolbar', () => {
    const later = tracker.add();
    for (const panel of [tracker.panels[0], later]) {
      const node = button(panel);
      expect(node.tagName).toBe('BUTTON');
      expect(node.title).toBe(CAPTION_WAITING);
      expect(node.getAttribute('aria-label')).toBe(CAPTION_WAITING);
      expect(shown(panel)).toBe(false);
    }
    expect(document.title).toBe('nb.ipynb');
  });

  it('shows the waiting notebook’s button while the panel is away; a click opens it', () => {
    const [first] = tracker.panels;
    const second = tracker.add();
    sidebar.wait(first, true);
    expect(shown(first)).toBe(true);
    expect(shown(second)).toBe(false);
    expect(document.title).toBe(`${TITLE_MARK}nb.ipynb`);

    button(first).click();
    expect(opened).toBe(1);
    sidebar.show(true); // the panel came on screen: the button goes, the mark stays
    expect(shown(first)).toBe(false);
    expect(document.title).toBe(`${TITLE_MARK}nb.ipynb`);

    sidebar.show(false);
    expect(shown(first)).toBe(true);
    sidebar.wait(first, false); // answered
    expect(shown(first)).toBe(false);
    expect(document.title).toBe('nb.ipynb');
  });

  it('marks a title the app sets again while a card waits', async () => {
    const [first] = tracker.panels;
    sidebar.wait(first, true);
    document.title = 'renamed.ipynb';
    await settle();
    expect(document.title).toBe(`${TITLE_MARK}renamed.ipynb`);
    sidebar.wait(first, false);
    await settle();
    expect(document.title).toBe('renamed.ipynb');
  });

  it('forgets a closed notebook', () => {
    const [first] = tracker.panels;
    first.close();
    expect(indicator.buttonOf(first as unknown as NotebookPanel)).toBeUndefined();
    sidebar.wait(first, true); // nothing left to show it in, and no error
  });

  it('never puts text in as markup', () => {
    const node = button(tracker.panels[0]);
    expect(node.querySelectorAll('*').length).toBe(3);
    expect(node.textContent).toBe('Loom is waiting');
  });
});
