// Minimal typings for Digital Bazaar's verifiable-credential libraries and the context packages,
// which ship none: only what the gateway (and its tests) use, typed as far as they use it.

declare module '@digitalbazaar/vc' {
  /** The jsonld.js document loader contract. */
  export type JsonLdDocumentLoader = (url: string) => Promise<{
    contextUrl: string | null;
    documentUrl: string;
    document: unknown;
    tag?: 'static';
  }>;
  export interface VcVerifyResult {
    verified: boolean;
    error?: unknown;
    results?: ReadonlyArray<{ verified: boolean; error?: unknown }>;
    statusResult?: unknown;
  }
  export function issue(options: {
    credential: Record<string, unknown>;
    suite: unknown;
    documentLoader: JsonLdDocumentLoader;
    purpose?: unknown;
    now?: Date | string;
  }): Promise<Record<string, unknown>>;
  export function verifyCredential(options: {
    credential: unknown;
    suite: unknown;
    documentLoader: JsonLdDocumentLoader;
    checkStatus?: (options: {
      credential: Record<string, unknown>;
      documentLoader: JsonLdDocumentLoader;
      suite: unknown;
    }) => Promise<{ verified: boolean; [key: string]: unknown }>;
    purpose?: unknown;
    now?: Date | string;
    maxClockSkew?: number;
  }): Promise<VcVerifyResult>;
  export const dateRegex: RegExp;
}

declare module '@digitalbazaar/ed25519-verification-key-2020' {
  export class Ed25519VerificationKey2020 {
    static generate(options: {
      seed: Uint8Array;
      id?: string;
      controller?: string;
    }): Promise<Ed25519VerificationKey2020>;
    readonly id: string | undefined;
    readonly controller: string | undefined;
    readonly publicKeyMultibase: string;
  }
}

declare module '@digitalbazaar/ed25519-signature-2020' {
  import type { Ed25519VerificationKey2020 } from '@digitalbazaar/ed25519-verification-key-2020';
  export class Ed25519Signature2020 {
    constructor(options?: { key?: Ed25519VerificationKey2020; date?: Date | string });
  }
}

declare module '@digitalbazaar/vc-bitstring-status-list' {
  import type { JsonLdDocumentLoader } from '@digitalbazaar/vc';
  export class BitstringStatusList {
    setStatus(index: number, status: boolean): void;
    getStatus(index: number): boolean;
    encode(): Promise<string>;
  }
  export function createList(options: { length: number }): Promise<BitstringStatusList>;
  export function decodeList(options: { encodedList: string }): Promise<BitstringStatusList>;
  export function checkStatus(options: {
    credential: unknown;
    documentLoader: JsonLdDocumentLoader;
    suite: unknown;
    verifyBitstringStatusListCredential?: boolean;
    verifyMatchingIssuers?: boolean;
  }): Promise<{
    verified: boolean;
    error?: unknown;
    results?: ReadonlyArray<{ verified: boolean; status: boolean; credentialStatus: unknown }>;
  }>;
}

declare module '@digitalbazaar/vc-bitstring-status-list-context' {
  export const CONTEXT_URL: string;
  export const CONTEXT: Record<string, unknown>;
  export const contexts: ReadonlyMap<string, Record<string, unknown>>;
}

// The CommonJS context packages: module.exports is { CONTEXT_URL, CONTEXT, contexts, … }.
declare module 'credentials-context' {
  const contextPackage: typeof import('@digitalbazaar/vc-bitstring-status-list-context');
  export default contextPackage;
}

declare module 'did-context' {
  const contextPackage: typeof import('@digitalbazaar/vc-bitstring-status-list-context');
  export default contextPackage;
}

declare module 'ed25519-signature-2020-context' {
  const contextPackage: typeof import('@digitalbazaar/vc-bitstring-status-list-context');
  export default contextPackage;
}
