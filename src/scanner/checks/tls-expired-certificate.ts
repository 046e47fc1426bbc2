/** An expired (or not yet valid) certificate: browsers refuse it, and it often marks a forgotten service. */
import type { CertificateCheck } from './check.js';

export const tlsExpiredCertificate: CertificateCheck = {
  id: 'tls-expired-certificate',
  name: 'Expired TLS certificate',
  severity: 'medium',
  appliesTo: 'certificate',
  description:
    'The endpoint presents a certificate outside its validity period. Clients reject it (or users learn to click through warnings), and an unrenewed certificate often marks an unmaintained service.',
  remediation: 'Renew the certificate and automate renewal (e.g. ACME); if the service is no longer needed, take it offline.',
  async run({ certificate }) {
    if (!certificate.expired && !certificate.notYetValid) return [];
    return [
      {
        matcher: certificate.expired ? 'expired' : 'not-yet-valid',
        evidence: {
          url: `${certificate.host}:${certificate.port}`,
          extracted: {
            subject: certificate.subject,
            validFrom: certificate.validFrom,
            validTo: certificate.validTo,
            daysUntilExpiry: certificate.daysUntilExpiry,
            fingerprint256: certificate.fingerprint256,
          },
        },
      },
    ];
  },
};
