/** A self-signed certificate: no third party vouches for it, so clients cannot tell it from an impostor's. */
import type { CertificateCheck } from './check.js';

export const tlsSelfSignedCertificate: CertificateCheck = {
  id: 'tls-self-signed-certificate',
  name: 'Self-signed TLS certificate',
  severity: 'low',
  appliesTo: 'certificate',
  description:
    'The endpoint presents a self-signed certificate. Clients cannot verify it, so connections are open to interception and users are trained to ignore certificate warnings.',
  remediation: 'Serve a certificate issued by a trusted CA (e.g. via ACME), or an internal CA that clients are configured to trust.',
  async run({ certificate }) {
    if (!certificate.selfSigned) return [];
    return [
      {
        matcher: 'self-signed',
        evidence: {
          url: `${certificate.host}:${certificate.port}`,
          extracted: {
            subject: certificate.subject,
            issuer: certificate.issuer,
            fingerprint256: certificate.fingerprint256,
            ...(certificate.trustError ? { trustError: certificate.trustError } : {}),
          },
        },
      },
    ];
  },
};
