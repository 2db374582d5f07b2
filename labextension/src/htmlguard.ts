/**
 * Model text never fetches or acts by itself (DESIGN §12; security review F3, F5).
 *
 * The sanitizer's output is HTML text. Before it becomes DOM, `guardHtml` parses
 * it into an inert `<template>` (nothing there loads: it has no browsing
 * context), and rewrites it:
 *
 * - an `<img>` whose source is remote (`http:`, `https:`, `//host`, `/path`)
 *   becomes a placeholder `[data-loom="remote-image"]` naming the host and the
 *   alt text, with a button that loads it (`activateRemoteImages`); an image in
 *   the notebook's folder (a relative path) and `data:image/*` stay; any other
 *   source is dropped (the alt text shows);
 * - every other attribute that fetches on insertion (`src`, `poster`, `srcset`,
 *   `background`, a `style` with `url(`/`image(`) is removed unless local;
 * - `javascript:`, `vbscript:` and `data:` links, and JupyterLab's command
 *   linker attributes (a click would run a JupyterLab command), are removed.
 *
 * So a remote `<img>` is never inserted into the page, not even for a moment.
 */
import type { IRenderMime } from '@jupyterlab/rendermime';

/** The placeholder of a remote image (DESIGN §12). */
export const REMOTE_IMAGE = 'remote-image';
/** Its button, and the image it becomes once loaded. */
export const LOAD_REMOTE_IMAGE = 'load-remote-image';
export const LOADED_REMOTE_IMAGE = 'remote-image-loaded';

const SOURCE_ATTRIBUTE = 'data-loom-src';
const INLINE_IMAGE = /^data:image\/(png|jpeg|gif|webp)[;,]/i;
const SCHEME = /^([a-z][a-z0-9+.-]*):/i;
const UNSAFE_LINK = /^(javascript|vbscript|data):/i;
const FETCHING = ['src', 'poster', 'background', 'lowsrc', 'dynsrc', 'data'];
const LINKS = ['href', 'xlink:href', 'action', 'formaction', 'cite'];
const STYLE_FETCH = /url|image|\\|@import|expression/i;

/** Where an image's source points. */
export type ImageSource =
  | { kind: 'local' }
  | { kind: 'inline' }
  | { kind: 'remote'; url: string; host: string }
  | { kind: 'blocked' };

/**
 * A URL as the browser reads it: tabs and newlines anywhere, and leading or
 * trailing controls and spaces, are ignored by the URL parser.
 */
export function normalizedUrl(value: string): string {
  // eslint-disable-next-line no-control-regex
  return value.replace(/[\t\n\r]/g, '').replace(/^[\u0000-\u0020]+|[\u0000-\u0020]+$/g, '');
}

/** Whether a link target would run script or carry inline data when followed. */
export function isUnsafeLink(value: string): boolean {
  return UNSAFE_LINK.test(normalizedUrl(value));
}

/**
 * Classify an image source: `local` (a relative path: the notebook's folder),
 * `inline` (`data:image/*`), `remote` (fetched from a host: named) or `blocked`.
 */
export function imageSource(value: string, base: string = document.baseURI): ImageSource {
  const src = normalizedUrl(value);
  if (src === '') {
    return { kind: 'local' };
  }
  if (INLINE_IMAGE.test(src)) {
    return { kind: 'inline' };
  }
  if (!SCHEME.test(src) && !/^[\\/]/.test(src)) {
    return { kind: 'local' };
  }
  let url: URL;
  try {
    url = new URL(src, base);
  } catch {
    return { kind: 'blocked' };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return { kind: 'blocked' };
  }
  return { kind: 'remote', url: url.href, host: url.host };
}

/** The sanitizer's HTML with remote images as placeholders and no fetch or unsafe link left. */
export function guardHtml(html: string): string {
  const template = document.createElement('template');
  template.innerHTML = html;
  const root = template.content;
  const doc = root.ownerDocument;
  for (const node of Array.from(root.querySelectorAll('*'))) {
    guardElement(node, doc);
  }
  return template.innerHTML;
}

/** A sanitizer whose output has gone through `guardHtml`: give it to `renderMarkdown`. */
export function guardedSanitizer(inner: IRenderMime.ISanitizer): IRenderMime.ISanitizer {
  return {
    sanitize: (dirty, options) => guardHtml(inner.sanitize(dirty, options)),
    getAutolink: () => inner.getAutolink?.() ?? true,
    get allowNamedProperties() {
      return inner.allowNamedProperties;
    },
    allowCommandLinker: false
  };
}

function guardElement(node: Element, doc: Document): void {
  for (const name of node.getAttributeNames()) {
    const lower = name.toLowerCase();
    if (lower.startsWith('data-loom') || lower.startsWith('data-commandlinker')) {
      node.removeAttribute(name); // Loom's own markers and JupyterLab commands: never from text
    }
  }
  if (node.tagName === 'IMG') {
    guardImage(node, doc);
    return;
  }
  node.removeAttribute('srcset');
  for (const name of FETCHING) {
    const value = node.getAttribute(name);
    if (value !== null && imageSource(value).kind !== 'local') {
      node.removeAttribute(name);
    }
  }
  if (node.tagName === 'SOURCE' || node.tagName === 'LINK') {
    node.remove();
    return;
  }
  guardCommon(node);
}

function guardCommon(node: Element): void {
  for (const name of LINKS) {
    const value = node.getAttribute(name);
    if (value !== null && isUnsafeLink(value)) {
      node.removeAttribute(name);
    }
  }
  const style = node.getAttribute('style');
  if (style !== null && STYLE_FETCH.test(style)) {
    node.removeAttribute('style');
  }
}

function guardImage(img: Element, doc: Document): void {
  img.removeAttribute('srcset');
  guardCommon(img);
  const source = imageSource(img.getAttribute('src') ?? '');
  if (source.kind === 'local' || source.kind === 'inline') {
    return;
  }
  const alt = img.getAttribute('alt') ?? '';
  if (source.kind === 'blocked') {
    const text = doc.createElement('span');
    text.textContent = alt === '' ? '[image not shown]' : `[${alt}]`;
    img.replaceWith(text);
    return;
  }
  img.replaceWith(placeholder(doc, source.url, source.host, alt));
}

/** `[data-loom="remote-image"]`: the alt text, the host, and a button that loads the image. */
function placeholder(doc: Document, url: string, host: string, alt: string): HTMLElement {
  const box = doc.createElement('span');
  box.className = 'loom-RemoteImage';
  box.dataset.loom = REMOTE_IMAGE;
  box.dataset.host = host;
  box.setAttribute(SOURCE_ATTRIBUTE, url);
  box.title = `Not loaded: ${url}`;
  const label = doc.createElement('span');
  label.className = 'loom-RemoteImage-label';
  const what = alt === '' ? 'An image' : `Image “${alt}”`;
  label.append(`${what} from `);
  const name = doc.createElement('b');
  name.textContent = host;
  label.append(name, ' was not loaded');
  if (alt !== '') {
    box.dataset.alt = alt;
  }
  const load = doc.createElement('button');
  load.type = 'button';
  load.className = 'loom-RemoteImage-load';
  load.dataset.loom = LOAD_REMOTE_IMAGE;
  load.textContent = `Load from ${host}`;
  box.append(label, load);
  return box;
}

/**
 * Give the placeholders under `host` their buttons: a click replaces the
 * placeholder with the image (sent without a referrer).
 */
export function activateRemoteImages(host: HTMLElement): void {
  host.querySelectorAll<HTMLElement>(`[data-loom="${REMOTE_IMAGE}"]`).forEach(box => {
    const button = box.querySelector<HTMLButtonElement>(`[data-loom="${LOAD_REMOTE_IMAGE}"]`);
    button?.addEventListener('click', event => {
      event.preventDefault(); // a linked image: load it, do not follow the link
      event.stopPropagation();
      loadRemoteImage(box);
    });
  });
}

/** Replace one placeholder with its image (a person asked for it). */
export function loadRemoteImage(box: HTMLElement): HTMLImageElement | null {
  const source = imageSource(box.getAttribute(SOURCE_ATTRIBUTE) ?? '');
  if (source.kind !== 'remote') {
    return null;
  }
  const img = document.createElement('img');
  img.referrerPolicy = 'no-referrer';
  img.alt = box.dataset.alt ?? '';
  img.dataset.loom = LOADED_REMOTE_IMAGE;
  img.dataset.host = source.host;
  img.src = source.url;
  box.replaceWith(img);
  return img;
}
