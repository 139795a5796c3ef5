//! Redis over TLS as redis-cli takes it: `rediss://` (and `rediss+cluster://` for a cluster whose
//! nodes take TLS), verified against the public CAs unless `cacert=FILE` names the CA, with
//! `cert=FILE&key=FILE` for a client certificate and `insecure` for no verification (redis-cli's
//! `--cacert`, `--cert`, `--key`, `--insecure`, here URL query parameters). The redis crate builds
//! the session on the shared rustls stack (ring); the files are checked by [`crate::tls`] first,
//! so a bad one is a configuration error that names it.

use std::path::PathBuf;

use redis::{ClientTlsConfig, TlsCertificates};

use crate::BindingError;

/// The URL's TLS parameters (redis-cli's option names), taken off before the redis crate parses it.
const PARAMETERS: [&str; 4] = ["cacert", "cert", "key", "insecure"];

/// What a `rediss://` URL asked for.
pub struct RedisTls {
    /// None: not TLS (`redis://`).
    pub certificates: Option<TlsCertificates>,
    /// No verification: the redis crate's `#insecure`.
    pub insecure: bool,
}

impl RedisTls {
    /// `url` without the TLS parameters, and what they ask for. A TLS parameter on a `redis://`
    /// URL is refused: it would otherwise be silently plain text.
    pub fn from_url(url: &url::Url, describe: &str) -> Result<(url::Url, RedisTls), BindingError> {
        let bad = |why: String| BindingError::Config(format!("invalid database URL '{describe}': {why}"));
        let (rest, given) = crate::tls::take_parameters(url, &PARAMETERS);
        let tls = url.scheme().starts_with("rediss");
        if !tls {
            if let Some(k) = PARAMETERS.iter().find(|k| given.contains_key(**k)) {
                return Err(bad(format!(
                    "'{k}' is a TLS parameter: use rediss:// for TLS"
                )));
            }
            let none = RedisTls {
                certificates: None,
                insecure: false,
            };
            return Ok((rest, none));
        }
        let file = |k: &str| given.get(k).filter(|v| !v.is_empty()).map(PathBuf::from);
        let read = |path: &PathBuf| {
            std::fs::read(path)
                .map_err(|e| bad(format!("TLS file '{}': {e}", path.display())))
        };
        let root_cert = match file("cacert") {
            Some(ca) => {
                crate::tls::certificates(&ca)?;
                Some(read(&ca)?)
            }
            None => None,
        };
        let client_tls = match (file("cert"), file("key")) {
            (None, None) => None,
            (Some(cert), Some(key)) => {
                // Checked as the other bindings check theirs (certificate and key fit).
                let mut check = crate::tls::TlsSettings::new(crate::tls::Verify::Nothing);
                check.client_cert = Some((cert.clone(), key.clone()));
                check.client_config()?;
                Some(ClientTlsConfig {
                    client_cert: read(&cert)?,
                    client_key: read(&key)?,
                })
            }
            _ => return Err(bad("'cert' and 'key' go together".into())),
        };
        let insecure = match given.get("insecure").map(String::as_str) {
            None | Some("false") => false,
            Some("" | "true") => true,
            Some(other) => return Err(bad(format!("insecure='{other}': expected true or false"))),
        };
        let certificates = TlsCertificates {
            client_tls,
            root_cert,
        };
        let tls = RedisTls {
            certificates: Some(certificates),
            insecure,
        };
        Ok((rest, tls))
    }

    /// The URL the redis crate connects to: `insecure` is its `#insecure` fragment.
    pub fn driver_url(&self, url: &url::Url) -> String {
        let mut u = url.clone();
        if self.insecure {
            u.set_fragment(Some("insecure"));
        }
        u.to_string()
    }

    /// A client of one server, with the URL's certificates.
    pub fn client(&self, url: &url::Url) -> Result<redis::Client, redis::RedisError> {
        match &self.certificates {
            Some(certs) => redis::Client::build_with_tls(self.driver_url(url), certs.clone()),
            None => redis::Client::open(url.as_str()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(url: &str) -> Result<(url::Url, RedisTls), BindingError> {
        RedisTls::from_url(&url::Url::parse(url).unwrap(), url)
    }

    #[test]
    fn tls_parameters_leave_the_url_and_need_rediss() {
        let (rest, tls) = parse("rediss://h:1/?insecure&x=1").unwrap();
        assert_eq!(rest.as_str(), "rediss://h:1/?x=1");
        assert!(tls.insecure && tls.certificates.is_some());
        assert_eq!(tls.driver_url(&rest), "rediss://h:1/?x=1#insecure");
        let (_, plain) = parse("redis://h:1").unwrap();
        assert!(plain.certificates.is_none());
        let e = parse("redis://h:1/?cacert=/ca.pem").err().unwrap().to_string();
        assert!(e.contains("use rediss://"), "{e}");
        let e = parse("rediss://h:1/?cacert=/nowhere/ca.pem").err().unwrap().to_string();
        assert!(e.contains("/nowhere/ca.pem"), "{e}");
        let e = parse("rediss://h:1/?cert=/c.pem").err().unwrap().to_string();
        assert!(e.contains("go together"), "{e}");
    }
}
