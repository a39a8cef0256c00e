// NPL sees history as input (docs/limits.md, "NPL sees history"): for each limit a call matches,
// `usage.<limitId>.calls` and `.sum` (the window before this call) and `.callsAfter` and
// `.sumAfter` (with it) are paths of the evaluation context; a limit the call does not match is
// absent, so NPL's missing-path rules apply. `sum` and `sumAfter` exist for budgets only.

/** The context root conditions read usage under. */
export const USAGE_ROOT = 'usage';
