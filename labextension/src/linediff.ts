/**
 * A cell's change as CodeMirror's merge view sees it: `@codemirror/merge` diffs the
 * two texts and groups the changes into chunks of whole lines. The in-cell view
 * (views/celldiff.ts) draws these same chunks with `unifiedMergeView`; this module
 * counts them for its heading.
 */
import { Chunk, DiffConfig } from '@codemirror/merge';
import { Text } from '@codemirror/state';

/**
 * The diff settings of the view and of the counts, so both see the same chunks:
 * `unifiedMergeView`'s own default (a full diff over at most 500 changed characters
 * per scanned range, then a faster, coarser one), and no clock, so a result never
 * depends on how busy the page is.
 */
export const DIFF_CONFIG: DiffConfig = { scanLimit: 500 };

/** A cell source as a CodeMirror document (an empty source is one empty line to it). */
export function textOf(source: string): Text {
  return Text.of(source.split(/\r\n?|\n/));
}

/** The changed chunks of `after` against `before`, as the merge view computes them. */
export function changedChunks(before: Text, after: Text): readonly Chunk[] {
  return Chunk.build(before, after, DIFF_CONFIG);
}

/**
 * How many lines the change adds and removes: the lines its chunks cover on each side
 * (the view passes the chunks it drew).
 */
export function diffStats(
  before: Text,
  after: Text,
  chunks: readonly Chunk[] = changedChunks(before, after)
): { added: number; removed: number } {
  let added = 0;
  let removed = 0;
  for (const chunk of chunks) {
    removed += Private.lines(before, chunk.fromA, chunk.toA, chunk.endA);
    added += Private.lines(after, chunk.fromB, chunk.toB, chunk.endB);
  }
  return { added, removed };
}

namespace Private {
  /** The lines a chunk side covers: none when it is empty, or the source is ('' has no lines). */
  export function lines(doc: Text, from: number, to: number, end: number): number {
    return from < to && doc.length > 0 ? doc.lineAt(end).number - doc.lineAt(from).number + 1 : 0;
  }
}
