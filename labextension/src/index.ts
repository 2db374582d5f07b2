import {
  ILabShell,
  ILayoutRestorer,
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { ICommandPalette } from '@jupyterlab/apputils';
import { INotebookTracker } from '@jupyterlab/notebook';
import { ISettingRegistry } from '@jupyterlab/settingregistry';

import { AttentionIndicator } from './attention';
import { loomIcon } from './icon';
import { LoomSidebar, SIDEBAR_ID } from './panel';

export { LoomSidebar, SIDEBAR_ID } from './panel';

const PLUGIN_ID = 'loom-jupyter:sidebar';
/** Command that reveals the Loom sidebar (palette: "Loom: Open chat"; shortcut in
 * schema/sidebar.json). */
const OPEN_COMMAND = 'loom:open-sidebar';
/** Where the palette lists it. */
const PALETTE_CATEGORY = 'Loom';
/** Rank among the right-sidebar panels (lower ranks sit higher). */
const SIDEBAR_RANK = 600;

/** The `autoLoad` user setting, read live (default on). */
function autoLoadSetting(registry: ISettingRegistry | null): () => boolean {
  let autoLoad = true;
  if (registry !== null) {
    void registry
      .load(PLUGIN_ID)
      .then(settings => {
        const read = (): void => {
          autoLoad = settings.get('autoLoad').composite !== false;
        };
        read();
        settings.changed.connect(read);
      })
      .catch(reason => console.warn('loom: settings unavailable, auto-load stays on', reason));
  }
  return () => autoLoad;
}

/**
 * The first time after install, open the panel once (so people find it); the user
 * setting `opened` remembers that it happened, for every workspace.
 */
function openOnce(app: JupyterFrontEnd, registry: ISettingRegistry | null): void {
  if (registry === null) {
    return;
  }
  void Promise.all([registry.load(PLUGIN_ID), app.restored])
    .then(async ([settings]) => {
      if (settings.get('opened').composite === true) {
        return;
      }
      app.shell.activateById(SIDEBAR_ID);
      await settings.set('opened', true);
    })
    .catch(reason => console.warn('loom: could not open the panel once', reason));
}

/** Where Notebook 7 keeps whether the panel was open (this browser's local storage). */
const OPEN_STATE = 'loom-jupyter:notebook7-sidebar-open';

/**
 * Notebook 7's shell ignores the layout restorer's side panels, so remember (in this
 * browser) whether the panel is open and open it again when a page loads.
 */
function keepOpenInNotebook7(app: JupyterFrontEnd, sidebar: LoomSidebar): void {
  void app.restored.then(() => {
    if (window.localStorage.getItem(OPEN_STATE) === 'true') {
      app.shell.activateById(SIDEBAR_ID);
    }
    sidebar.shownChanged.connect((_, shown) =>
      window.localStorage.setItem(OPEN_STATE, String(shown))
    );
  });
}

/**
 * In JupyterLab and in Notebook 7 (whose shell is not ILabShell, hence
 * optional): the sidebar goes into the right area through `app.shell`. Both
 * shells' layout restorers bring it back (open or not) after a reload; the
 * palette and a shortcut open it.
 */
const plugin: JupyterFrontEndPlugin<void> = {
  id: PLUGIN_ID,
  description: 'The Loom sidebar: a chat with the coworker in the active notebook’s kernel.',
  autoStart: true,
  requires: [INotebookTracker],
  optional: [ILabShell, ISettingRegistry, ILayoutRestorer, ICommandPalette],
  activate: (
    app: JupyterFrontEnd,
    tracker: INotebookTracker,
    labShell: ILabShell | null,
    registry: ISettingRegistry | null,
    restorer: ILayoutRestorer | null,
    palette: ICommandPalette | null
  ): void => {
    const sidebar = new LoomSidebar({
      tracker,
      client: labShell === null ? 'notebook7' : 'lab',
      autoLoad: autoLoadSetting(registry),
      shellChanged: labShell?.currentChanged ?? null,
      reveal: () => app.shell.activateById(SIDEBAR_ID)
    });
    app.shell.add(sidebar, 'right', { rank: SIDEBAR_RANK });
    restorer?.add(sidebar, SIDEBAR_ID);
    if (labShell === null) {
      keepOpenInNotebook7(app, sidebar);
    }
    // Notebook 7 has no side tab bar for the badge: while a card waits and the panel is
    // away, the notebook's toolbar shows a button that opens it (in JupyterLab too).
    new AttentionIndicator({
      sidebar,
      notebooks: tracker,
      open: () => app.shell.activateById(SIDEBAR_ID),
      icon: loomIcon
    });
    app.commands.addCommand(OPEN_COMMAND, {
      label: args => (args.isPalette === true ? 'Open chat' : 'Open the Loom sidebar'),
      caption: 'Show the Loom chat for the current notebook',
      icon: args => (args.isPalette === true ? undefined : loomIcon),
      execute: () => app.shell.activateById(SIDEBAR_ID)
    });
    palette?.addItem({
      command: OPEN_COMMAND,
      category: PALETTE_CATEGORY,
      args: { isPalette: true }
    });
    openOnce(app, registry);
  }
};

export default plugin;
