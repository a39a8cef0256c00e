// Message templates with named placeholders: 'approval {approvalId} not found'. The names are
// typed from the template literal itself, so a call that forgets or misspells a placeholder does
// not compile. Templates are split into parts once and cached, because decision answers on the
// inspect path render them per request.

/** The `{name}`s of a template, as a union of string literal types. */
export type PlaceholderName<Template extends string> =
  Template extends `${string}{${infer Name}}${infer Rest}` ? Name | PlaceholderName<Rest> : never;

/** The values a template needs, one per placeholder. */
export type TemplateParams<Template extends string> = {
  readonly [Name in PlaceholderName<Template>]: string | number;
};

/** What a template without placeholders takes: nothing, or an empty object. */
export type NoParams = { readonly [name: string]: never };

const PLACEHOLDER = /\{([^{}]*)\}/g;
const IDENTIFIER = /^[A-Za-z][A-Za-z0-9]*$/;

// Even indexes are literal text, odd indexes placeholder names.
const compiled = new Map<string, readonly string[]>();

/** The placeholder names of a template, in order of appearance (duplicates kept). */
export function listPlaceholders(template: string): string[] {
  return [...template.matchAll(PLACEHOLDER)].map((match) => match[1] as string);
}

/** True when a placeholder name is a plain identifier (letters and digits, letter first). */
export function isPlaceholderName(name: string): boolean {
  return IDENTIFIER.test(name);
}

/** Fills a template's placeholders from params; a missing value renders as `?`. */
export function fillTemplate(
  template: string,
  params: Readonly<Record<string, string | number>> | undefined,
): string {
  const parts = compileTemplate(template);
  if (parts.length === 1) return parts[0] as string;
  let text = parts[0] as string;
  for (let i = 1; i < parts.length; i += 2) {
    const value = params?.[parts[i] as string];
    text += (value === undefined ? '?' : String(value)) + (parts[i + 1] as string);
  }
  return text;
}

function compileTemplate(template: string): readonly string[] {
  let parts = compiled.get(template);
  if (parts === undefined) {
    parts = template.split(PLACEHOLDER);
    compiled.set(template, parts);
  }
  return parts;
}
