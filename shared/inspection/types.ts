// The shape of a rule that fired, shared by the data plane's detectors and the control plane's
// masking of approval arguments. Pure module: no I/O, no framework imports.

/** A rule that fired, before a detector attaches the argument path. Never holds a secret value. */
export interface Finding {
  readonly kind: string;
  readonly detail: string;
}
