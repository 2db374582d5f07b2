import { LabIcon } from '@jupyterlab/ui-components';

/**
 * The Loom icon: three woven threads. Uses JupyterLab's icon colour classes so
 * it follows light and dark themes.
 */
const LOOM_SVG = `<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16" viewBox="0 0 24 24">
  <g class="jp-icon3" fill="#616161">
    <path d="M4 3h2v18H4zM11 3h2v18h-2zM18 3h2v18h-2z"/>
    <path d="M2 7h20v2H2zM2 15h20v2H2z" opacity="0.6"/>
  </g>
</svg>`;

export const loomIcon = new LabIcon({ name: 'loom-jupyter:loom', svgstr: LOOM_SVG });
