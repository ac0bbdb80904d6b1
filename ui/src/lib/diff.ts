/** A unified diff (as the Rust side makes it with `similar`) split into typed lines. */
export type DiffLine = { kind: 'add' | 'del' | 'ctx' | 'hunk' | 'file'; text: string };

export function parseDiff(diff: string): DiffLine[] {
  const lines = diff.replace(/\n$/, '').split('\n');
  return lines.map((text) => {
    if (text.startsWith('+++') || text.startsWith('---')) return { kind: 'file', text };
    if (text.startsWith('@@')) return { kind: 'hunk', text };
    if (text.startsWith('+')) return { kind: 'add', text };
    if (text.startsWith('-')) return { kind: 'del', text };
    return { kind: 'ctx', text };
  });
}

/** Lines added and removed. */
export function diffStat(diff: string): { added: number; removed: number } {
  let added = 0;
  let removed = 0;
  for (const l of parseDiff(diff)) {
    if (l.kind === 'add') added++;
    else if (l.kind === 'del') removed++;
  }
  return { added, removed };
}
