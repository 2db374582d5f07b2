/**
 * Which notebook is on screen (DESIGN §14, issue 38.6): each chat hears whether its notebook
 * shows in a visible page, and which one the person just turned to (its tab became current,
 * the page became visible, the window gained focus); when the page goes away, none shows.
 */
import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import { Signal } from '@lumino/signaling';

import { ScreenWatch, Showing } from '../src/onscreen';

type Listener = () => void;

/** The page's document and window, as the watch uses them. */
class FakePage {
  visibilityState = 'visible';
  readonly listeners = new Map<string, Listener>();
  addEventListener(name: string, listener: Listener): void {
    this.listeners.set(name, listener);
  }
  removeEventListener(name: string): void {
    this.listeners.delete(name);
  }
  fire(name: string): void {
    this.listeners.get(name)?.();
  }
}

class Chat implements Showing {
  constructor(readonly notebook: NotebookPanel) {}
  readonly said: [boolean, boolean][] = [];
  showing(onScreen: boolean, focus = false): void {
    this.said.push([onScreen, focus]);
  }
  get last(): [boolean, boolean] | undefined {
    return this.said[this.said.length - 1];
  }
}

function panel(visible: boolean): NotebookPanel {
  return { isVisible: visible, isDisposed: false } as unknown as NotebookPanel;
}

describe('ScreenWatch', () => {
  const page = new FakePage();
  const globals = globalThis as unknown as { document: unknown; window: unknown };
  let tracker: { currentChanged: Signal<unknown, NotebookPanel | null>; currentWidget: unknown };
  let shown: NotebookPanel;
  let hidden: NotebookPanel;
  let chats: Chat[];
  let watch: ScreenWatch;

  beforeEach(() => {
    jest.useFakeTimers();
    globals.document = page;
    globals.window = page;
    page.visibilityState = 'visible';
    shown = panel(true);
    hidden = panel(false);
    chats = [new Chat(shown), new Chat(hidden)];
    tracker = { currentChanged: new Signal(globalThis), currentWidget: shown };
    watch = new ScreenWatch(tracker as unknown as INotebookTracker, () => chats);
  });

  afterEach(() => {
    watch.dispose();
    jest.useRealTimers();
  });

  it('tells the notebook whose tab became current that the person turned to it', () => {
    tracker.currentChanged.emit(shown);
    jest.runAllTimers();
    expect(chats[0].last).toEqual([true, true]);
    expect(chats[1].last).toEqual([false, false]);
  });

  it('shows no notebook while the page is hidden, and turns to the current one again', () => {
    page.visibilityState = 'hidden';
    page.fire('visibilitychange');
    jest.runAllTimers();
    expect(chats.map(chat => chat.last)).toEqual([
      [false, false],
      [false, false]
    ]);
    page.visibilityState = 'visible';
    page.fire('focus');
    jest.runAllTimers();
    expect(chats[0].last).toEqual([true, true]);
  });

  it('says at once, when the page goes away, that no notebook shows', () => {
    page.fire('pagehide'); // no timer: the page may not run again
    expect(chats.map(chat => chat.last)).toEqual([
      [false, false],
      [false, false]
    ]);
  });

  it('lets go of the page when disposed', () => {
    watch.dispose();
    expect(page.listeners.size).toBe(0);
  });
});
