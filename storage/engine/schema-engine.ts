// Prisma's schema engine compiled to WASM, driven through a driver adapter: how we diff the Prisma
// schema against a database (to create migrations, and to prove that the migrations produce
// exactly the schema) on machines where the native engine cannot be downloaded. Development and
// test tooling only: the running gateway applies migrations with migrations.ts.
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { PGlite } from '@electric-sql/pglite';
import { PrismaPg } from '@prisma/adapter-pg';
import { bindMigrationAwareSqlAdapterFactory } from '@prisma/driver-adapter-utils';
import pg from 'pg';
import { PrismaPGlite } from 'pglite-prisma-adapter';
import { findPackageRoot } from '../../shared/package-root.js';

interface WasmSchemaEngine {
  diff(params: {
    from: DiffTarget;
    to: DiffTarget;
    script: boolean;
    exitCode: boolean | null;
    filters: { externalTables: string[]; externalEnums: string[] };
  }): Promise<{ exitCode: number; stdout: string | null }>;
  free(): void;
}

type DiffTarget =
  | { tag: 'empty' }
  | { tag: 'schemaDatamodel'; files: { path: string; content: string }[] }
  | { tag: 'schemaDatasource'; files: { path: string; content: string }[]; configDir: string };

interface SchemaEngineGlue {
  __wbg_set_wasm(exports: Record<string, unknown>): void;
  SchemaEngine: {
    new: (
      options: { datamodels: [string, string][] },
      log: (message: string) => void,
      adapter: object,
    ) => Promise<WasmSchemaEngine>;
  };
}

interface WasmApi {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (
    module: object,
    imports: Record<string, unknown>,
  ) => { exports: Record<string, unknown> };
}

let glue: Promise<SchemaEngineGlue> | undefined;

async function loadGlue(): Promise<SchemaEngineGlue> {
  const module = (await import(
    '@prisma/schema-engine-wasm/schema_engine_bg'
  )) as unknown as SchemaEngineGlue;
  // The package exports only its JS entry points; the .wasm file sits beside them.
  const require = createRequire(import.meta.url);
  const packageDir = dirname(require.resolve('@prisma/schema-engine-wasm'));
  const bytes = await readFile(join(packageDir, 'schema_engine_bg.wasm'));
  // Node's WebAssembly global is not in the ES lib typings; describe the two calls we make.
  const wasm = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;
  const instance = new wasm.Instance(new wasm.Module(bytes), { './schema_engine_bg.js': module });
  module.__wbg_set_wasm(instance.exports);
  (instance.exports.__wbindgen_start as () => void)();
  return module;
}

export async function readPrismaSchema(): Promise<{ path: string; content: string }> {
  const path = join(findPackageRoot(), 'prisma', 'schema.prisma');
  return { path, content: await readFile(path, 'utf8') };
}

export interface SchemaDiffer {
  /** SQL turning the database into what the Prisma schema describes ('' when they agree). */
  diffDatabaseToSchema(): Promise<string>;
  /** SQL creating the whole Prisma schema in an empty database. */
  diffEmptyToSchema(): Promise<string>;
  close(): void;
}

/**
 * The engine reads catalog columns of PostgreSQL's one-byte type "char" (OID 18), which the pg
 * driver adapter refuses to map; they are single characters, so reporting them as text is exact.
 */
class CharAsTextPool extends pg.Pool {
  // biome-ignore lint/suspicious/noExplicitAny: pg's overloads cannot be re-declared one by one.
  override async query(...args: any[]): Promise<any> {
    const result = await (super.query as (...a: unknown[]) => Promise<pg.QueryResult>)(...args);
    for (const field of result.fields ?? []) {
      if (field.dataTypeID === PG_CHAR_OID) field.dataTypeID = PG_TEXT_OID;
    }
    return result;
  }
}

const PG_CHAR_OID = 18;
const PG_TEXT_OID = 25;

export type SchemaDifferTarget =
  | { readonly kind: 'pglite'; readonly client: PGlite }
  | { readonly kind: 'postgres'; readonly url: string; readonly schema: string };

/** A schema engine connected to a PGlite instance or a PostgreSQL schema. */
export async function openSchemaDiffer(target: SchemaDifferTarget): Promise<SchemaDiffer> {
  glue ??= loadGlue();
  const engineGlue = await glue;
  const schema = await readPrismaSchema();
  const factory =
    target.kind === 'pglite'
      ? new PrismaPGlite(target.client)
      : new PrismaPg(
          new CharAsTextPool({
            connectionString: target.url,
            options: `-c search_path=${target.schema}`,
          }),
          { schema: target.schema, disposeExternalPool: true },
        );
  const engine = await engineGlue.SchemaEngine.new(
    { datamodels: [[schema.path, schema.content]] },
    () => {},
    bindMigrationAwareSqlAdapterFactory(factory),
  );
  const filters = { externalTables: [], externalEnums: [] };
  const datamodel: DiffTarget = { tag: 'schemaDatamodel', files: [schema] };
  const script = async (from: DiffTarget) =>
    (await engine.diff({ from, to: datamodel, script: true, exitCode: null, filters })).stdout ??
    '';
  return {
    diffDatabaseToSchema: () =>
      script({ tag: 'schemaDatasource', files: [schema], configDir: findPackageRoot() }),
    diffEmptyToSchema: () => script({ tag: 'empty' }),
    close: () => engine.free(),
  };
}
