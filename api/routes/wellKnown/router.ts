import { createRouter } from '../../routing';
import { acceptedOrigins } from '../../../shared/commands/webauthn';

/**
 * Well-known resources of the relying party's host. /.well-known/webauthn lists the origins that
 * may use our RP ID (WebAuthn Level 3, "related origin requests"): a browser on one of the
 * regional front ends fetches it from https://<WEBAUTHN_RP_ID>/.well-known/webauthn before it lets
 * that page use a passkey of our RP ID, so one passkey works on every listed address
 * (docs/auth.md, "One passkey for every address"; docs/production.md for the proxy route).
 */
export const { router: wellKnownRouter, add } = createRouter('/.well-known', 'Authentication');

add({
  method: 'get',
  path: '/webauthn',
  auth: 'public',
  summary: 'WebAuthn related origins: the front ends that may use this relying party’s passkeys',
  responses: {
    200: {
      description: 'The RP origin and WEBAUTHN_RELATED_ORIGINS',
      schema: { type: 'object', required: ['origins'], properties: { origins: { type: 'array', items: { type: 'string', format: 'uri' } } } },
    },
  },
  handler: (ctx) => {
    // Public and the same for everyone: browsers and proxies may keep it for an hour.
    ctx.set('Cache-Control', 'public, max-age=3600');
    ctx.body = { origins: acceptedOrigins() };
  },
});
