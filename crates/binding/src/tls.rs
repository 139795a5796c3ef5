//! TLS for every network binding, on one stack: rustls with ring (what the MongoDB driver already
//! uses). Each binding maps its own client's option names (libpq's `sslmode`, MySQL's `ssl-mode`,
//! `rediss://`) onto a [`TlsSettings`]; this module loads the files and builds the rustls
//! configuration with the verification that mode asks for.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::{
    verify_tls12_signature, verify_tls13_signature, CryptoProvider, WebPkiSupportedAlgorithms,
};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{CertificateError, DigitallySignedStruct, RootCertStore, SignatureScheme};

use crate::BindingError;

/// How much of the server's certificate is checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verify {
    /// Encrypted, nothing checked (libpq's `require` without a root certificate, MySQL's
    /// `REQUIRED`, redis-cli's `--insecure`): protects against listening, not against an impostor.
    Nothing,
    /// The chain up to a trusted CA, not the host name (`verify-ca`, `VERIFY_CA`).
    Ca,
    /// The chain and the host name (`verify-full`, `VERIFY_IDENTITY`, `rediss://`, `https://`).
    Full,
}

/// What one binding's URL and options asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsSettings {
    pub verify: Verify,
    /// Trusted CAs (PEM, one or more certificates); None: the public CAs of webpki-roots.
    pub ca_file: Option<PathBuf>,
    /// A client certificate (PEM chain) and its private key (PEM), for servers that ask for one.
    pub client_cert: Option<(PathBuf, PathBuf)>,
}

impl TlsSettings {
    pub fn new(verify: Verify) -> Self {
        TlsSettings {
            verify,
            ca_file: None,
            client_cert: None,
        }
    }

    /// The rustls client configuration: the trusted CAs loaded, the client certificate if any,
    /// the verification of [`TlsSettings::verify`]. A file that cannot be read or holds no
    /// certificate is a configuration error naming it.
    pub fn client_config(&self) -> Result<Arc<rustls::ClientConfig>, BindingError> {
        let provider = provider();
        let builder = rustls::ClientConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()
            .map_err(|e| BindingError::Other(format!("TLS: {e}")))?
            .dangerous()
            .with_custom_certificate_verifier(self.verifier(provider)?);
        let config = match &self.client_cert {
            None => builder.with_no_client_auth(),
            Some((cert, key)) => builder
                .with_client_auth_cert(certificates(cert)?, private_key(key)?)
                .map_err(|e| {
                    BindingError::Config(format!(
                        "TLS client certificate '{}' and key '{}' do not fit: {e}",
                        cert.display(),
                        key.display()
                    ))
                })?,
        };
        Ok(Arc::new(config))
    }

    fn verifier(
        &self,
        provider: Arc<CryptoProvider>,
    ) -> Result<Arc<dyn ServerCertVerifier>, BindingError> {
        let algorithms = provider.signature_verification_algorithms;
        if self.verify == Verify::Nothing {
            return Ok(Arc::new(Lenient {
                chain: None,
                algorithms,
            }));
        }
        let mut roots = RootCertStore::empty();
        match &self.ca_file {
            Some(file) => {
                for cert in certificates(file)? {
                    roots.add(cert).map_err(|e| {
                        BindingError::Config(format!(
                            "TLS CA file '{}' holds a certificate rustls refuses: {e}",
                            file.display()
                        ))
                    })?;
                }
            }
            None => roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned()),
        }
        let webpki = WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider)
            .build()
            .map_err(|e| BindingError::Other(format!("TLS: {e}")))?;
        Ok(match self.verify {
            Verify::Ca => Arc::new(Lenient {
                chain: Some(webpki),
                algorithms,
            }),
            _ => webpki,
        })
    }
}

/// ring, whatever provider another crate of the process may have installed as the default.
fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// The certificates of PEM file `file` (at least one).
pub fn certificates(file: &Path) -> Result<Vec<CertificateDer<'static>>, BindingError> {
    let bad = |why: String| BindingError::Config(format!("TLS file '{}': {why}", file.display()));
    let certs = CertificateDer::pem_file_iter(file)
        .map_err(|e| bad(pem_error(e)))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| bad(pem_error(e)))?;
    if certs.is_empty() {
        return Err(bad("no PEM certificate in it".into()));
    }
    Ok(certs)
}

fn private_key(file: &Path) -> Result<PrivateKeyDer<'static>, BindingError> {
    PrivateKeyDer::from_pem_file(file).map_err(|e| {
        BindingError::Config(format!(
            "TLS key file '{}': {}",
            file.display(),
            pem_error(e)
        ))
    })
}

fn pem_error(e: rustls::pki_types::pem::Error) -> String {
    match e {
        rustls::pki_types::pem::Error::Io(io) => io.to_string(),
        rustls::pki_types::pem::Error::NoItemsFound => "no PEM item of the expected kind".into(),
        other => format!("not PEM: {other:?}"),
    }
}

/// `url` without the query parameters `names` (its driver would refuse what it does not know), and
/// those parameters as given, each under its name with `_` written `-` (MySQL's client takes both).
pub fn take_parameters(
    url: &url::Url,
    names: &[&str],
) -> (url::Url, std::collections::HashMap<String, String>) {
    let mut rest = url.clone();
    rest.query_pairs_mut().clear();
    let mut given = std::collections::HashMap::new();
    for (k, v) in url.query_pairs() {
        if names.contains(&k.as_ref()) {
            given.insert(k.replace('_', "-"), v.into_owned());
        } else {
            rest.query_pairs_mut().append_pair(&k, &v);
        }
    }
    if rest.query() == Some("") {
        rest.set_query(None);
    }
    (rest, given)
}

/// A driver's message made to name the check that failed: rustls says "invalid peer certificate:
/// UnknownIssuer", a user wants to read that the certificate verification refused the server.
pub fn explain(message: &str) -> String {
    const RUSTLS: &str = "invalid peer certificate: ";
    // The server's alerts about the client's certificate (RFC 8446, 6.2).
    const REFUSED: [&str; 3] = [
        "received fatal alert: UnknownCA",
        "received fatal alert: BadCertificate",
        "received fatal alert: CertificateRequired",
    ];
    if let Some(alert) = REFUSED.iter().find(|a| message.contains(**a)) {
        let at = message.find(alert).unwrap_or(0);
        return format!(
            "{}TLS: the server refused the client certificate ({})",
            &message[..at],
            &message[at..]
        );
    }
    let Some(at) = message.find(RUSTLS) else {
        return message.to_string();
    };
    let why = &message[at + RUSTLS.len()..];
    let why = if why.starts_with("UnknownIssuer") {
        why.replacen(
            "UnknownIssuer",
            "the server's certificate is not signed by a trusted CA (UnknownIssuer)",
            1,
        )
    } else {
        why.to_string()
    };
    format!(
        "{}TLS certificate verification failed: {why}",
        &message[..at]
    )
}

/// Checks less of the server's certificate than webpki does: with `chain`, the chain up to the
/// trusted CAs and its dates, not the host name (libpq's `verify-ca`); without, nothing. The
/// handshake's signatures are checked either way (the session is then encrypted to whoever holds
/// the certificate's key), by the crypto provider's `algorithms`, as webpki checks them.
#[derive(Debug)]
struct Lenient {
    chain: Option<Arc<WebPkiServerVerifier>>,
    algorithms: WebPkiSupportedAlgorithms,
}

impl ServerCertVerifier for Lenient {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let Some(chain) = &self.chain else {
            return Ok(ServerCertVerified::assertion());
        };
        // webpki checks the name last, after the chain: a name error means the chain held.
        match chain.verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now) {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(message, cert, dss, &self.algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(message, cert, dss, &self.algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algorithms.supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn explain_names_the_check_and_keeps_what_came_before() {
        assert_eq!(
            explain("error performing TLS handshake: invalid peer certificate: UnknownIssuer"),
            "error performing TLS handshake: TLS certificate verification failed: the server's \
             certificate is not signed by a trusted CA (UnknownIssuer)"
        );
        assert_eq!(explain("Connection refused"), "Connection refused");
        assert_eq!(
            explain("Io: received fatal alert: UnknownCA"),
            "Io: TLS: the server refused the client certificate (received fatal alert: UnknownCA)"
        );
    }

    #[test]
    fn a_missing_or_empty_ca_file_is_a_configuration_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = TlsSettings::new(Verify::Full);
        s.ca_file = Some(dir.path().join("nowhere.pem"));
        let e = s.client_config().err().unwrap();
        assert!(
            matches!(&e, BindingError::Config(m) if m.contains("nowhere.pem")),
            "{e}"
        );
        let empty = dir.path().join("empty.pem");
        std::fs::write(&empty, "not a certificate\n").unwrap();
        s.ca_file = Some(empty);
        let e = s.client_config().err().unwrap().to_string();
        assert!(
            e.contains("empty.pem") && e.contains("no PEM certificate"),
            "{e}"
        );
    }

    #[test]
    fn every_mode_builds_with_the_public_roots() {
        for verify in [Verify::Nothing, Verify::Ca, Verify::Full] {
            TlsSettings::new(verify).client_config().unwrap();
        }
    }
}
