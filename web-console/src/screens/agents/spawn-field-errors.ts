// Where a refused spawn's problems belong in the form: REQUEST_INVALID issues name `input.<field>`
// (with an index or a nested field: `input.allowedTools.3`, `input.persona.tone`), and
// AGENT_TOOLS_EXCEED_PARENT is about the allowed tools. What fits no field stays in the alert.
import type { ApiProblem } from '../../components/error-alert.tsx';

export const SPAWN_FIELDS = [
  'name',
  'role',
  'systemPrompt',
  'tone',
  'language',
  'allowedTools',
  'mcpAudiences',
  'parentAgentId',
] as const;

export type SpawnField = (typeof SPAWN_FIELDS)[number];
export type SpawnFieldErrors = Partial<Record<SpawnField, string>>;

function fieldOf(path: string): SpawnField | null {
  const parts = path.replace(/^input\./, '').split('.');
  const head = parts[0] === 'persona' ? parts[1] : parts[0];
  return SPAWN_FIELDS.find((field) => field === head) ?? null;
}

export function spawnFieldErrors(problem: ApiProblem): SpawnFieldErrors {
  const errors: SpawnFieldErrors = {};
  if (problem.code === 'AGENT_TOOLS_EXCEED_PARENT') errors.allowedTools = problem.message;
  if (problem.code === 'AGENT_REVOKED' || problem.code === 'NOT_FOUND') {
    errors.parentAgentId = problem.message;
  }
  for (const issue of problem.issues) {
    const field = fieldOf(issue.field);
    if (!field) continue;
    // An issue of one list entry names it: `allowedTools.3: …`.
    const entry = issue.field.replace(/^input\.(persona\.)?[^.]+\.?/, '');
    const message = entry ? `entry ${entry}: ${issue.message}` : issue.message;
    errors[field] = errors[field] ? `${errors[field]}; ${message}` : message;
  }
  return errors;
}
