/**
 * A `%cowork` answer in a cell (DESIGN §12, "model text is never markup in a cell").
 *
 * The kernel sends model text as `application/vnd.loom.markdown+json`
 * (`{"markdown": "..."}`, with a readable `text/plain` beside it), never as
 * `text/markdown` or `text/html`: JupyterLab trusts the outputs of a cell it
 * runs, and of a notebook it signed on save, and renders trusted markdown and
 * HTML without its sanitizer. This mime extension renders the type through the
 * sidebar's one markdown path (`renderUntrusted`: sanitized, remote images as
 * placeholders), whether the output is trusted or not, live and when the saved
 * notebook is reopened. Without the extension, Jupyter shows the `text/plain`.
 */
import { IRenderMime } from '@jupyterlab/rendermime';
import { Widget } from '@lumino/widgets';

import { MarkdownTools, makeLinksInert, renderUntrusted } from './markdown';

/** The MIME type of model text in a cell (`ANSWER_MIME` in `loom_jupyter/jupyter/cell/render.py`). */
export const ANSWER_MIME = 'application/vnd.loom.markdown+json';

/** The markdown of an answer output's data (anything else reads as nothing). */
export function answerMarkdown(data: unknown): string {
  if (typeof data === 'object' && data !== null && !Array.isArray(data)) {
    const markdown = (data as Record<string, unknown>).markdown;
    return typeof markdown === 'string' ? markdown : '';
  }
  return '';
}

/** Renders one answer output; re-rendered in place while the answer streams. */
export class AnswerRenderer extends Widget implements IRenderMime.IRenderer {
  constructor(options: IRenderMime.IRendererOptions) {
    super();
    this._tools = options;
    this.addClass('loom-Answer');
    this.addClass('jp-RenderedMarkdown');
    this.addClass('jp-RenderedHTMLCommon');
    this.node.dataset.loom = 'answer';
  }

  async renderModel(model: IRenderMime.IMimeModel): Promise<void> {
    const source = answerMarkdown(model.data[ANSWER_MIME]);
    const render = ++this._renders;
    const fresh = document.createElement('div');
    fresh.className = 'loom-Answer-body';
    await renderUntrusted(fresh, source, { rendermime: () => this._tools });
    if (render !== this._renders || this.isDisposed) {
      return; // a later update of the same answer has been rendered since
    }
    this.node.replaceChildren(fresh);
    this._typeset();
  }

  protected onAfterAttach(): void {
    this._typeset();
  }

  private _typeset(): void {
    const body = this.node.firstElementChild;
    if (this.isAttached && body instanceof HTMLElement && this._tools.latexTypesetter) {
      void Promise.resolve(this._tools.latexTypesetter.typeset(body)).then(() =>
        makeLinksInert(body)
      );
    }
  }

  private readonly _tools: MarkdownTools;
  private _renders = 0;
}

/** The factory: safe (it never trusts the text), ahead of text/plain. */
export const answerFactory: IRenderMime.IRendererFactory = {
  safe: true,
  mimeTypes: [ANSWER_MIME],
  defaultRank: 40,
  createRenderer: options => new AnswerRenderer(options)
};

const extension: IRenderMime.IExtension = {
  id: 'loom-jupyter:answer',
  description: "Renders Loom's answers in cells as sanitized markdown.",
  rendererFactory: answerFactory,
  rank: 40,
  dataType: 'json'
};

export default extension;
