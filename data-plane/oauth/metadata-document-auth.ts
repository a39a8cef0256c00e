// How a client ID metadata document client authenticates at the token endpoint, as its document
// says: `none` (no client authentication: PKCE and the agent's identity proof bound its code; an
// assertion sent anyway is refused), or `private_key_jwt` (an RFC 7523 client assertion whose
// iss and sub are the client's URL and whose audience is the token endpoint or the issuer, signed
// by a key of the document's `jwks` or `jwks_uri`, the latter fetched under the documents' strict
// profile; each jti once: client-assertion.ts). The keys come from the document, never from the
// assertion's header.
import { createLocalJWKSet } from 'jose';
import { gatewayError } from '../../shared/errors/index.js';
import type { ClientMetadataDocument } from '../../shared/oauth/client-id-metadata.js';
import { ReplayGuard } from '../agentiam/replay-guard.js';
import { verifyClientAssertion } from './client-assertion.js';
import { JWT_BEARER_ASSERTION_TYPE } from './client-auth.js';
import type { MetadataDocuments } from './metadata-documents.js';
import { type OAuthParams, optionalParam } from './request-params.js';

const JWT_BEARER = JWT_BEARER_ASSERTION_TYPE;
/** Asymmetric algorithms only: a document's keys are public. */
const ALGORITHMS = ['EdDSA', 'Ed25519', 'ES256', 'ES384', 'PS256', 'RS256'];

export class MetadataDocumentAuthenticator {
  readonly #documents: MetadataDocuments;
  readonly #jtis = new ReplayGuard({ capacity: 100_000 });

  constructor(documents: MetadataDocuments) {
    this.#documents = documents;
  }

  /** The client's document, once the request authenticates as it says; invalid_client else. */
  async authenticate(
    clientId: string,
    params: OAuthParams,
    audiences: readonly string[],
  ): Promise<ClientMetadataDocument> {
    const document = await this.#documents.get(clientId);
    const assertion = optionalParam(params, 'client_assertion');
    if (document.authMethod === 'none') {
      if (assertion !== undefined) {
        throw invalidClient('its document says token_endpoint_auth_method none: send no assertion');
      }
      return document;
    }
    if (optionalParam(params, 'client_assertion_type') !== JWT_BEARER || !assertion) {
      throw invalidClient(
        `it authenticates with private_key_jwt: a ${JWT_BEARER} client_assertion`,
      );
    }
    const keys = document.jwks ?? (await this.#documents.jwks(document.jwksUri as string));
    await verifyClientAssertion(assertion, createLocalJWKSet(keys as never), {
      clientId,
      audiences,
      algorithms: ALGORITHMS,
      jtis: this.#jtis,
    });
    return document;
  }
}

function invalidClient(problem: string) {
  return gatewayError('OAUTH_INVALID_CLIENT', { problem });
}
