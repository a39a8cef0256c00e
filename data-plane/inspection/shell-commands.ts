// The command tables of the shell analyzer (shell.ts): the commands its rules look at, the
// wrappers it sees through, the shells and SQL clients whose arguments it analyses in turn, and
// the device and option lists some rules need. Kept apart from the tokenizer so a command is
// added here without reading the parser; names are lower case, as the analyzer folds them.

/** SQL clients whose long arguments go to the SQL classifier. */
export const SQL_CLIENTS: ReadonlySet<string> = new Set([
  'psql',
  'mysql',
  'mariadb',
  'sqlite3',
  'sqlcmd',
  'duckdb',
  'clickhouse-client',
  'cockroach',
]);

/** Command names the rules look at (pre-check: a string naming none of them is not parsed). */
export const COMMANDS_WITH_RULES: readonly string[] = [
  'rm',
  'mkfs',
  'mke2fs',
  'mkswap',
  'dd',
  'shred',
  'wipefs',
  'blkdiscard',
  'fdisk',
  'cfdisk',
  'sfdisk',
  'gdisk',
  'sgdisk',
  'parted',
  'shutdown',
  'reboot',
  'halt',
  'poweroff',
  'init',
  'telinit',
  'systemctl',
  'kill',
  'chmod',
  'chown',
  'chgrp',
  'git',
  'curl',
  'wget',
  'find',
  'truncate',
  'kubectl',
  'terraform',
  'helm',
  'docker',
  'podman',
  'aws',
  'gsutil',
  'gcloud',
  'redis-cli',
  'dropdb',
  ...SQL_CLIENTS,
  'format',
  'del',
  'erase',
  'rd',
  'rmdir',
  'remove-item',
  'ri',
];

/** Words before a command that do not change which command runs (keywords, plain prefixes). */
export const SIMPLE_PREFIXES: ReadonlySet<string> = new Set([
  'nohup',
  'time',
  'exec',
  'command',
  'builtin',
  'then',
  'do',
  'else',
  'elif',
  'if',
  'while',
  'until',
  '!',
  '{',
  '}',
  '(',
  'stdbuf',
  'unbuffer',
  'nocorrect',
]);
/** Wrappers that run the command after their own options; value: options taking a value. */
export const WRAPPERS: ReadonlyMap<string, ReadonlySet<string>> = new Map([
  ['sudo', new Set(['-u', '-g', '-C', '-p', '-U', '-D', '-h', '-r', '-t', '-T'])],
  ['doas', new Set(['-u', '-C'])],
  ['env', new Set(['-u', '-C', '--unset', '--chdir'])],
  ['nice', new Set(['-n', '--adjustment'])],
  ['ionice', new Set(['-c', '-n', '-p'])],
  ['timeout', new Set(['-s', '-k', '--signal', '--kill-after'])],
  ['xargs', new Set(['-I', '-n', '-P', '-d', '-L', '-s', '-a', '-E', '-i'])],
  ['watch', new Set(['-n', '-d', '--interval'])],
  ['chroot', new Set(['--userspec', '--groups'])],
  ['busybox', new Set()],
  ['strace', new Set(['-o', '-e', '-p'])],
  ['flock', new Set(['-w'])],
]);
/** Wrappers followed by one positional word before the command. */
export const WRAPPER_POSITIONALS: ReadonlySet<string> = new Set(['timeout', 'chroot', 'flock']);
/** Shells whose `-c` script is analysed as a command line in turn. */
export const SHELLS: ReadonlySet<string> = new Set([
  'sh',
  'bash',
  'zsh',
  'dash',
  'ksh',
  'ash',
  'fish',
  'su',
  'mksh',
  'tcsh',
]);
/** Partition editors: destructive unless one of PARTITION_READ_ONLY is given. */
export const PARTITIONERS: ReadonlySet<string> = new Set([
  'fdisk',
  'sfdisk',
  'gdisk',
  'sgdisk',
  'cfdisk',
  'parted',
]);
/** Partition editor options that only list, print or describe. */
export const PARTITION_READ_ONLY: ReadonlySet<string> = new Set([
  '-l',
  '--list',
  'print',
  '-p',
  '--print',
  '-h',
  '--help',
  '-v',
  '-V',
  '--version',
  '-s',
  '--show-size',
]);
/** Power commands: destructive with arguments, wrapped, or as a whole command-like value. */
export const POWER: ReadonlySet<string> = new Set(['shutdown', 'reboot', 'halt', 'poweroff']);
/** Device name prefixes under /dev/ that hold file systems (a write there destroys them). */
export const BLOCK_DEVICES: readonly string[] = [
  'sd',
  'hd',
  'vd',
  'xvd',
  'nvme',
  'mmcblk',
  'disk',
  'rdisk',
  'mapper/',
  'md',
  'dm-',
  'nbd',
  'loop',
];
/** ssh options that take a value: the host is the first word after them. */
export const SSH_VALUE_FLAGS: ReadonlySet<string> = new Set(
  'bcDEeFIiJLlmOopQRSWw'.split('').map((c) => `-${c}`),
);
