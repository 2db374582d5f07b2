import {
  ILabShell,
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { INotebookTracker } from '@jupyterlab/notebook';

import { loomIcon } from './icon';
import { LoomSidebar, SIDEBAR_ID } from './panel';

export { LoomSidebar, SIDEBAR_ID } from './panel';

/** Command that reveals the Loom sidebar. */
const OPEN_COMMAND = 'loom:open-sidebar';

/** Rank among the right-sidebar panels (lower ranks sit higher). */
const SIDEBAR_RANK = 600;

const plugin: JupyterFrontEndPlugin<void> = {
  id: 'loom-jupyter:sidebar',
  description: 'The Loom sidebar: follows the active notebook and hosts the coworker.',
  autoStart: true,
  requires: [ILabShell, INotebookTracker],
  activate: (app: JupyterFrontEnd, shell: ILabShell, tracker: INotebookTracker): void => {
    const sidebar = new LoomSidebar(tracker);
    shell.add(sidebar, 'right', { rank: SIDEBAR_RANK });
    app.commands.addCommand(OPEN_COMMAND, {
      label: 'Open the Loom sidebar',
      icon: loomIcon,
      execute: () => shell.activateById(SIDEBAR_ID)
    });
  }
};

export default plugin;
