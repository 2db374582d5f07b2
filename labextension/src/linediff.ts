/**
 * A line diff (longest common subsequence on lines) for showing a cell's
 * change in the cell: what stays, what goes, what comes.
 */

export type DiffKind = 'same' | 'del' | 'add';
export type DiffLine = { kind: DiffKind; text: string };

/** Above this many line pairs the middle is shown as all removed, then all added. */
const MAX_CELLS = 4_000_000;

/** Split into lines; an empty text has no lines. */
export function splitLines(text: string): string[] {
  return text === '' ? [] : text.split('\n');
}

/** The lines of `after` against `before`, in order: kept, removed and added lines. */
export function lineDiff(before: string, after: string): DiffLine[] {
  const a = splitLines(before);
  const b = splitLines(after);
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) {
    head++;
  }
  let tail = 0;
  while (
    tail < a.length - head &&
    tail < b.length - head &&
    a[a.length - 1 - tail] === b[b.length - 1 - tail]
  ) {
    tail++;
  }
  const same = (text: string): DiffLine => ({ kind: 'same', text });
  const middle = Private.middle(a.slice(head, a.length - tail), b.slice(head, b.length - tail));
  return [...a.slice(0, head).map(same), ...middle, ...a.slice(a.length - tail).map(same)];
}

/** How many lines a diff adds and removes. */
export function diffStats(lines: DiffLine[]): { added: number; removed: number } {
  const count = (kind: DiffKind): number => lines.filter(line => line.kind === kind).length;
  return { added: count('add'), removed: count('del') };
}

namespace Private {
  export function middle(a: string[], b: string[]): DiffLine[] {
    if (a.length * b.length > MAX_CELLS) {
      return [...a.map(del), ...b.map(add)];
    }
    return walk(a, b, table(a, b));
  }

  const del = (text: string): DiffLine => ({ kind: 'del', text });
  const add = (text: string): DiffLine => ({ kind: 'add', text });

  /** lcs[i][j]: the LCS length of a[i:] and b[j:]. */
  export function table(a: string[], b: string[]): Uint32Array[] {
    const lcs = Array.from({ length: a.length + 1 }, () => new Uint32Array(b.length + 1));
    for (let i = a.length - 1; i >= 0; i--) {
      for (let j = b.length - 1; j >= 0; j--) {
        lcs[i][j] = a[i] === b[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
      }
    }
    return lcs;
  }

  /** Removed lines come before the added lines that replace them. */
  export function walk(a: string[], b: string[], lcs: Uint32Array[]): DiffLine[] {
    const out: DiffLine[] = [];
    let i = 0;
    let j = 0;
    while (i < a.length || j < b.length) {
      if (i < a.length && j < b.length && a[i] === b[j]) {
        out.push({ kind: 'same', text: a[i] });
        i++;
        j++;
      } else if (j >= b.length || (i < a.length && lcs[i + 1][j] >= lcs[i][j + 1])) {
        out.push(del(a[i++]));
      } else {
        out.push(add(b[j++]));
      }
    }
    return out;
  }
}
