// The default of a gateway policy's destructiveToolPatterns: the control plane writes it into a
// new tenant's policy, and the data plane's destructive-operation detector compiles whatever list
// the policy holds. Shared, so neither plane has to import the other for it.

/**
 * The built-in tool-name patterns (the default of the tenant policy's destructiveToolPatterns).
 * Whole words only. `format` alone is left out on purpose (format_date, format_code are common
 * and harmless); disk formatting is covered by the multi-word patterns and the shell rules.
 */
export const DEFAULT_DESTRUCTIVE_TOOL_PATTERNS: readonly string[] = Object.freeze([
  'delete',
  'drop',
  'truncate',
  'destroy',
  'remove',
  'purge',
  'wipe',
  'erase',
  'shred',
  'expunge',
  'obliterate',
  'nuke',
  'rm',
  'rmdir',
  'unlink',
  'kill',
  'terminate',
  'shutdown',
  'poweroff',
  'reboot',
  'decommission',
  'deprovision',
  'uninstall',
  'flushall',
  'flushdb',
  'mkfs',
  'format_disk',
  'format_drive',
  'format_volume',
  'format_partition',
]);
