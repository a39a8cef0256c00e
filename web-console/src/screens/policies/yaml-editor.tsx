// CodeMirror with YAML highlighting and a lint gutter, showing the issues it is given (it does not
// lint by itself: the caller owns the engine's answer and hands placed issues in). Its style
// elements carry the page's CSP nonce, or the strict style-src would refuse them.

import { yaml } from '@codemirror/lang-yaml';
import { lintGutter, setDiagnostics } from '@codemirror/lint';
import { Input, useComputedColorScheme } from '@mantine/core';
import CodeMirror, { EditorView } from '@uiw/react-codemirror';
import { useEffect, useMemo, useState } from 'react';
import { cspNonce } from '../../csp-nonce.ts';
import { type PlacedIssue, toDiagnostics } from './diagnostics.ts';

// One object for every render: the editor reconfigures itself whenever this prop is a new object,
// and a reconfiguration drops the lint state that setDiagnostics added, so the underlines of the
// issues vanished (their gutter markers stayed) on any later render, such as a query answering.
const BASIC_SETUP = { foldGutter: false } as const;

export function YamlEditor({
  label,
  value,
  onChange,
  issues,
}: {
  label: string;
  value: string;
  onChange: (value: string) => void;
  /** Placed against `value`; null while they are not known for it. */
  issues: readonly PlacedIssue[] | null;
}) {
  const scheme = useComputedColorScheme('light');
  const [view, setView] = useState<EditorView | null>(null);
  const extensions = useMemo(
    () => [
      EditorView.cspNonce.of(cspNonce()),
      yaml(),
      lintGutter(),
      EditorView.contentAttributes.of({ 'aria-label': label }),
    ],
    [label],
  );
  useEffect(() => {
    if (!view || issues === null) return;
    view.dispatch(setDiagnostics(view.state, toDiagnostics(view.state.doc, issues)));
  }, [view, issues]);
  return (
    <Input.Wrapper label={label} description="YAML or JSON (docs/npl.md)">
      <CodeMirror
        value={value}
        onChange={onChange}
        onCreateEditor={setView}
        extensions={extensions}
        theme={scheme}
        height="360px"
        basicSetup={BASIC_SETUP}
      />
    </Input.Wrapper>
  );
}
