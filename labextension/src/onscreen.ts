/**
 * Which notebook the person is looking at, told to each notebook's kernel (DESIGN §14):
 * a notebook is on screen while its panel is visible in a visible page. The person turns
 * to one when its tab becomes the current notebook, when the page becomes visible and when
 * the window gains focus; each chat's connection sends `focus` (its `hello` carries the
 * state too). When the page goes away, every chat says it is no longer on screen (a tab
 * that closes may say nothing more: the kernel's `ping` finds that out).
 */
import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import { IDisposable } from '@lumino/disposable';
import { ISignal } from '@lumino/signaling';

/** A notebook's chat, as the watch tells it. */
export type Showing = {
  readonly notebook: NotebookPanel;
  showing(onScreen: boolean, focus?: boolean): void;
};

export class ScreenWatch implements IDisposable {
  /**
   * `chats`: the open chats; `shellChanged`: the main area's current widget changed
   * (JupyterLab's shell; Notebook 7 shows one notebook per page and has none).
   */
  constructor(
    private readonly _tracker: INotebookTracker,
    private readonly _chats: () => Iterable<Showing>,
    private readonly _shellChanged: ISignal<unknown, unknown> | null = null
  ) {
    _tracker.currentChanged.connect(this._turned, this);
    _shellChanged?.connect(this._changed, this);
    document.addEventListener('visibilitychange', this._toCurrent);
    window.addEventListener('focus', this._toCurrent);
    window.addEventListener('pagehide', this._gone);
  }

  get isDisposed(): boolean {
    return this._disposed;
  }

  /** Look again once the layout has settled; `turnedTo`: the notebook just turned to. */
  look(turnedTo: NotebookPanel | null = null): void {
    setTimeout(() => this._tell(turnedTo), 0);
  }

  dispose(): void {
    if (this._disposed) {
      return;
    }
    this._disposed = true;
    this._tracker.currentChanged.disconnect(this._turned, this);
    this._shellChanged?.disconnect(this._changed, this);
    document.removeEventListener('visibilitychange', this._toCurrent);
    window.removeEventListener('focus', this._toCurrent);
    window.removeEventListener('pagehide', this._gone);
  }

  private _tell(turnedTo: NotebookPanel | null): void {
    if (this._disposed) {
      return;
    }
    const visible = document.visibilityState === 'visible';
    for (const chat of this._chats()) {
      const onScreen = visible && !chat.notebook.isDisposed && chat.notebook.isVisible;
      chat.showing(onScreen, onScreen && chat.notebook === turnedTo);
    }
  }

  private _turned(_: INotebookTracker, panel: NotebookPanel | null): void {
    this.look(panel);
  }

  private _changed(): void {
    this.look();
  }

  private readonly _toCurrent = (): void => {
    this.look(this._tracker.currentWidget);
  };

  private readonly _gone = (): void => {
    for (const chat of this._chats()) {
      chat.showing(false); // now: the page may not run again
    }
  };

  private _disposed = false;
}
