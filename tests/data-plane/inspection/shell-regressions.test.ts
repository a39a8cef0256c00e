// Command lines the real-parser properties (shell-oracle.test.ts) found the detector missing,
// pinned as plain cases so they stay fixed whatever seed the properties run with.

import { describe, expect, it } from 'vitest';
import { compileDestructiveDetector } from '../../../data-plane/inspection/index.js';
import { mentionsCommand } from '../../../data-plane/inspection/shell.js';

const detect = compileDestructiveDetector({ toolPatterns: [] });

function detectCommand(command: string) {
  return detect({ method: 'tools/call', toolName: 'run', args: { command } });
}

describe('shell detector regressions', () => {
  it.each([
    ['echo ; for f in a b; do echo $( s"hred" ); done', 'shred'],
    ['if echo; then echo $( echo `r"m" -rf` ); fi', 'rm -rf'],
    ['r\\m -rf /srv', 'rm -rf'],
    ["'r'm -rf /srv", 'rm -rf'],
  ])('sees a command name the shell unquotes: %s', (command, detail) => {
    expect(detectCommand(command)).toMatchObject({ kind: 'shell', detail });
  });

  it('the pre-check reads a word as the shell does, quotes removed', () => {
    expect(mentionsCommand('s"hred" notes.txt')).toBe(true);
    expect(mentionsCommand('r\\m -rf x')).toBe(true);
    expect(mentionsCommand('"arm" is not rm-like')).toBe(false);
    expect(mentionsCommand("it's a plain sentence")).toBe(false);
  });
});
